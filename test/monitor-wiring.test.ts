// The server runs its own status monitor: started when the app is ready, checking every
// MONITOR_INTERVAL_SECONDS on the app's clock, and stopped when the app closes.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { BACKGROUND_LOOPS, buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';

const clock = new FakeClock('2026-06-01T08:00:00Z');
let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await buildTestApp({ clock, backgroundJobs: true, env: { MONITOR_INTERVAL_SECONDS: '30' } });
  token = await adminToken(t);
});
afterAll(() => t.close());

/** One monitor interval: wait until the monitor sleeps again (its last check may still be writing), then move time. */
async function interval(): Promise<void> {
  await vi.waitFor(() => expect(clock.pendingSleepers).toBe(BACKGROUND_LOOPS), { timeout: 10_000 });
  await clock.advance(30_000);
}

const eventsOf = async (id: string) =>
  (await t.app.inject({ method: 'GET', url: `/api/v1/agents/${id}/events`, headers: bearer(token) })).json() as Array<{ type: string }>;

describe('the status monitor of a running server', () => {
  it('records a new agent coming online at the next interval, and stops with the app', async () => {
    const key = (await createKey(t.app, bearer(token), 'agent')).key;
    const reg = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(key), payload: { hostname: 'pve1', platform: 'linux' } });
    const id = (reg.json() as { agent_id: string }).agent_id;
    const hb = await t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: apiKey(key), payload: { agent_id: id, platform: 'linux' } });
    expect(hb.statusCode).toBe(200);
    expect(await eventsOf(id)).toEqual([]);

    // The monitor waits on the app's clock: one interval later it has written the event.
    await interval();
    await vi.waitFor(async () => expect((await eventsOf(id)).map((e) => e.type)).toEqual(['online']));
    // Two more minutes: stale at 2 min, and nothing else before offline.
    for (let i = 0; i < 4; i++) await interval();
    await vi.waitFor(async () => expect((await eventsOf(id)).map((e) => e.type)).toEqual(['stale', 'online']));

    // Closing the app ends the monitor (and the maintenance): nothing waits on the clock any more.
    await vi.waitFor(() => expect(clock.pendingSleepers).toBe(BACKGROUND_LOOPS), { timeout: 10_000 });
    await t.app.close();
    expect(clock.pendingSleepers).toBe(0);
  });
});
