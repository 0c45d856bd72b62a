// Keep-alive pacing with many agents: each round pings every socket exactly once, but in batches of 250
// spaced out in time, so a large fleet's pings (and their pongs) never arrive as one burst. Real sockets
// against the real server; the server clock is fake, so one round is one advance of 30 s.
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { BACKGROUND_LOOPS } from './helpers/app.js';
import { adminToken, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer, type RawPeer } from './helpers/live-agent.js';

const PEERS = 600; // three batches: 250, 250, 100
const clock = new FakeClock('2026-03-02T12:00:00Z');
let live: LiveServer;

beforeAll(async () => {
  live = await startLiveServer({ clock, backgroundJobs: true });
});
afterAll(() => live?.close());

it('pings every one of 600 sockets once per round, in batches at least 50 ms apart', { timeout: 120_000 }, async () => {
  const key = (await createKey(live.app, bearer(await adminToken(live)), 'agent')).key;
  const peers: RawPeer[] = [];
  for (let i = 0; i < PEERS; i += 50) {
    const ids = await Promise.all(Array.from({ length: 50 }, (_, j) => live.register(key, `fw-${i + j}`)));
    peers.push(...(await Promise.all(ids.map((id) => live.openRaw(id, key)))));
  }
  const pingedAt: number[] = [];
  for (const peer of peers) peer.ws.on('ping', () => pingedAt.push(performance.now()));

  for (let round = 1; round <= 2; round++) {
    await vi.waitFor(() => expect(clock.pendingSleepers).toBe(BACKGROUND_LOOPS), { timeout: 20_000 });
    pingedAt.length = 0;
    await clock.advance(30_000);
    await vi.waitFor(() => expect(peers.every((p) => p.pings === round)).toBe(true), { timeout: 20_000 });
    // Two gaps of at least 50 ms lie between the first batch and the last.
    expect(Math.max(...pingedAt) - Math.min(...pingedAt)).toBeGreaterThanOrEqual(95);
  }
  expect(peers.every((p) => p.pings === 2)).toBe(true);
});
