import { describe, expect, it } from 'vitest';
import { heartbeatWindow, statusOf } from './agent-status.js';

const now = new Date('2026-05-01T12:00:00.000Z');
const ago = (ms: number) => new Date(now.getTime() - ms);
const s = 1000;

describe('statusOf', () => {
  it.each([
    [0, 'online'],
    [119 * s, 'online'],
    [120 * s - 1, 'online'],
    [120 * s, 'stale'],
    [300 * s, 'stale'],
    [300 * s + 1, 'offline'],
    [301 * s, 'offline'],
  ])('age %i ms is %s', (age, expected) => {
    expect(statusOf(ago(age), now)).toBe(expected);
  });

  it('is unknown without a heartbeat', () => {
    expect(statusOf(null, now)).toBe('unknown');
  });
});

describe('heartbeatWindow', () => {
  it('selects the same agents statusOf classifies', () => {
    const inWindow = (w: ReturnType<typeof heartbeatWindow>, t: Date) =>
      (!w.after || t > w.after) &&
      (!w.atOrAfter || t >= w.atOrAfter) &&
      (!w.before || t < w.before) &&
      (!w.atOrBefore || t <= w.atOrBefore);
    for (const age of [0, 119_999, 120_000, 200_000, 300_000, 300_001, 900_000]) {
      const t = ago(age);
      for (const status of ['online', 'stale', 'offline'] as const) {
        expect(inWindow(heartbeatWindow(status, now), t), `${age} ${status}`).toBe(statusOf(t, now) === status);
      }
    }
  });
});
