import { describe, expect, it } from 'vitest';
import { DROP_RUNG, nextReconnect, reconnectWindowMs } from './reconnect-delay.js';

/** A small seeded generator (mulberry32): the same "random" waits on every run. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ladder = { initialMs: 1000, maxMs: 60_000 };

/** How many of `delays` fall in each of `buckets` equal slices of [0, windowMs]. */
function histogram(delays: number[], windowMs: number, buckets: number): number[] {
  const counts = new Array<number>(buckets).fill(0);
  for (const d of delays) counts[Math.min(buckets - 1, Math.floor((d / windowMs) * buckets))]! += 1;
  return counts;
}

describe('reconnect delays (full jitter)', () => {
  it('spreads 5,000 agents that lost their instance over the whole drop window, not into one second', () => {
    const random = seededRandom(32);
    const delays = Array.from({ length: 5000 }, () => nextReconnect({ ladder, rung: 0, afterDrop: true, retryAfterMs: 0, random }).delayMs);
    const windowMs = ladder.initialMs * 2 ** DROP_RUNG;
    expect(windowMs).toBe(8000);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...delays)).toBeLessThanOrEqual(windowMs);
    // Every second of the 8 s window gets about an eighth of the agents (625); the old 0.8–1.2 s wait put
    // all 5,000 into one.
    for (const count of histogram(delays, windowMs, 8)) {
      expect(count).toBeGreaterThan(525);
      expect(count).toBeLessThan(725);
    }
    expect(Math.min(...delays)).toBeLessThan(50);
    expect(Math.max(...delays)).toBeGreaterThan(windowMs - 50);
  });

  it('draws each wait after failed attempts uniformly from a window that doubles, up to maxMs', () => {
    const random = seededRandom(7);
    for (const [rung, windowMs] of [[0, 1000], [1, 2000], [4, 16_000], [6, 60_000], [40, 60_000]] as const) {
      expect(reconnectWindowMs(ladder, rung)).toBe(windowMs);
      const delays = Array.from({ length: 2000 }, () => nextReconnect({ ladder, rung, afterDrop: false, retryAfterMs: 0, random }).delayMs);
      expect(Math.max(...delays)).toBeLessThanOrEqual(windowMs);
      for (const count of histogram(delays, windowMs, 4)) {
        expect(count).toBeGreaterThan(400);
        expect(count).toBeLessThan(600);
      }
    }
  });

  it('never waits less than the server\'s Retry-After', () => {
    const random = seededRandom(429);
    const delays = Array.from({ length: 1000 }, () => nextReconnect({ ladder, rung: 0, afterDrop: true, retryAfterMs: 7000, random }).delayMs);
    expect(Math.min(...delays)).toBe(7000);
    // Random waits longer than the Retry-After are kept: agents told the same Retry-After still spread.
    expect(delays.filter((d) => d > 7000).length).toBeGreaterThan(50);
    expect(nextReconnect({ ladder, rung: 0, afterDrop: false, retryAfterMs: 30_000, random: () => 0.99 }).delayMs).toBe(30_000);
  });

  it('lifts the ladder to the drop rung after a lost connection, and climbs one rung per wait', () => {
    const top = () => 0.999_999;
    expect(nextReconnect({ ladder, rung: 0, afterDrop: true, retryAfterMs: 0, random: top })).toEqual({ delayMs: 8000, nextRung: DROP_RUNG + 1 });
    // A connection that was up only briefly, after several failures, keeps its higher rung.
    expect(nextReconnect({ ladder, rung: 5, afterDrop: true, retryAfterMs: 0, random: top })).toEqual({ delayMs: 32_000, nextRung: 6 });
    // A failed attempt (never opened) is one agent's trouble: no lift.
    expect(nextReconnect({ ladder, rung: 0, afterDrop: false, retryAfterMs: 0, random: top })).toEqual({ delayMs: 1000, nextRung: 1 });
  });
});
