// Agent status and its events (contract §2, spec §3/§6) on a FakeClock: the status an operator reads at
// each age boundary (and the ?status= filter agreeing with it), the monitor writing exactly one event per
// change and none otherwise, no repeated events after a restart, the events endpoints, and the monitor
// loop checking at once, then every interval, until stopped.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { StatusMonitor } from '../src/modules/monitor/status-monitor.js';
import { FakeClock } from '../src/platform/clock.js';
import { createLogger } from '../src/platform/logger.js';
import { buildTestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';

const SEC = 1000;
const MIN = 60 * SEC;
const silent = createLogger({ level: 'silent' });

type Status = 'online' | 'stale' | 'offline' | 'unknown';
interface Event { id: number; agent_id: string; type: string; created_at: string }

/** One app on its own FakeClock, with an admin token and an agent key (the way agents authenticate). */
async function setup(start: string) {
  const clock = new FakeClock(start);
  const t = await buildTestApp({ clock });
  const auth = bearer(await adminToken(t));
  const agentKey = apiKey((await createKey(t.app, auth, 'agent')).key);
  const call = (url: string, headers = auth) => t.app.inject({ method: 'GET', url: `/api/v1${url}`, headers });
  const register = async (hostname: string) => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: agentKey, payload: { hostname, platform: 'linux' } });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { agent_id: string }).agent_id;
  };
  const heartbeat = async (agent_id: string) => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: agentKey, payload: { agent_id, platform: 'linux' } });
    expect(res.statusCode, res.body).toBe(200);
  };
  const events = async (url: string) => {
    const res = await call(url);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Event[];
  };
  /** An agent's events as [type, time], newest first, as GET /agents/{id}/events shows them. */
  const history = async (id: string) => (await events(`/agents/${id}/events`)).map((e) => [e.type, e.created_at]);
  return { clock, t, call, register, heartbeat, events, history };
}

describe('status on read at the age boundaries', () => {
  const NOW = new Date('2026-03-01T12:00:00.000Z');
  let s: Awaited<ReturnType<typeof setup>>;
  // [label, expected status, heartbeat age in ms (null: never)]
  const cases: Array<[string, Status, number | null]> = [
    ['0:00', 'online', 0],
    ['1:59', 'online', 119 * SEC],
    ['1:59.999', 'online', 2 * MIN - 1],
    ['2:00', 'stale', 2 * MIN],
    ['5:00', 'stale', 5 * MIN],
    ['5:00.001', 'offline', 5 * MIN + 1],
    ['5:01', 'offline', 5 * MIN + SEC],
    ['no heartbeat', 'unknown', null],
  ];
  const ids = new Map<string, string>();

  beforeAll(async () => {
    s = await setup('2026-03-01T11:00:00Z');
    for (const [label, , age] of cases) {
      const id = await s.register(`host-${label}`);
      ids.set(label, id);
      if (age === null) continue;
      s.clock.set(new Date(NOW.getTime() - age));
      await s.heartbeat(id);
    }
    s.clock.set(NOW);
  });
  afterAll(() => s.t.close());

  it.each(cases)('heartbeat age %s reads as %s in GET /agents/{id}', async (label, status, age) => {
    const res = await s.call(`/agents/${ids.get(label)}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      status,
      last_heartbeat: age === null ? null : new Date(NOW.getTime() - age).toISOString(),
    });
  });

  it.each(['online', 'stale', 'offline', 'unknown'] as const)('GET /agents?status=%s selects exactly the agents of that status', async (status) => {
    const res = await s.call(`/agents?status=${status}`);
    expect(res.statusCode, res.body).toBe(200);
    const listed = res.json() as Array<{ id: string; status: Status }>;
    const expected = cases.filter(([, st]) => st === status).map(([label]) => ids.get(label));
    expect(listed.map((a) => a.id).sort()).toEqual([...expected].sort());
    expect(listed.every((a) => a.status === status), res.body).toBe(true);
  });

  it('lists every agent with the same status GET /agents/{id} gives', async () => {
    const res = await s.call('/agents');
    const byId = new Map((res.json() as Array<{ id: string; status: Status }>).map((a) => [a.id, a.status]));
    expect(Object.fromEntries(cases.map(([label]) => [label, byId.get(ids.get(label)!)]))).toEqual(
      Object.fromEntries(cases.map(([label, st]) => [label, st])),
    );
  });

  it('refuses an unknown status filter with 400', async () => {
    expectError(await s.call('/agents?status=dead'), 400, 'VALIDATION_ERROR');
  });
});

describe('the status monitor', () => {
  const T0 = new Date('2026-04-01T08:00:00.000Z');
  const at = (ms: number) => new Date(T0.getTime() + ms).toISOString();
  let s: Awaited<ReturnType<typeof setup>>;
  let monitor: StatusMonitor;
  let agent: string;
  let silentAgent: string;

  beforeAll(async () => {
    s = await setup(T0.toISOString());
    monitor = new StatusMonitor(s.t.db.db, s.clock, MIN, silent);
    agent = await s.register('watched');
    silentAgent = await s.register('never-heard-from');
  });
  afterAll(() => s.t.close());

  it('writes one online event after the first heartbeat, and none on the next check', async () => {
    await s.heartbeat(agent);
    expect(await monitor.runOnce()).toBe(1);
    expect(await s.history(agent)).toEqual([['online', at(0)]]);
    expect(await monitor.runOnce()).toBe(0);
    expect(await s.history(agent)).toEqual([['online', at(0)]]);
  });

  it('writes stale once at 2:00 (not at 1:59), offline once at 5:01 (not at 5:00), online after a heartbeat', async () => {
    const step = async (toMs: number, written: number) => {
      s.clock.set(new Date(T0.getTime() + toMs));
      expect(await monitor.runOnce(), `check at ${toMs} ms`).toBe(written);
    };
    await step(119 * SEC, 0);
    await step(2 * MIN, 1);
    await step(2 * MIN, 0);
    await step(5 * MIN, 0);
    await step(5 * MIN + SEC, 1);
    await step(30 * MIN, 0);
    await s.heartbeat(agent);
    await step(30 * MIN, 1);
    await step(30 * MIN + SEC, 0);
    expect(await s.history(agent)).toEqual([
      ['online', at(30 * MIN)],
      ['offline', at(5 * MIN + SEC)],
      ['stale', at(2 * MIN)],
      ['online', at(0)],
    ]);
  });

  it('writes no event for an agent that never sent a heartbeat', async () => {
    expect(await s.history(silentAgent)).toEqual([]);
  });

  it('writes no duplicates after a restart, and one event for what changed while it was down', async () => {
    const restarted = new StatusMonitor(s.t.db.db, s.clock, MIN, silent);
    expect(await restarted.runOnce()).toBe(0);
    // Down for 10 minutes: the agent went from online straight to offline as far as anyone can tell.
    s.clock.set(new Date(T0.getTime() + 40 * MIN + SEC));
    const afterDowntime = new StatusMonitor(s.t.db.db, s.clock, MIN, silent);
    expect(await afterDowntime.runOnce()).toBe(1);
    expect(await new StatusMonitor(s.t.db.db, s.clock, MIN, silent).runOnce()).toBe(0);
    expect((await s.history(agent)).slice(0, 2)).toEqual([['offline', at(40 * MIN + SEC)], ['online', at(30 * MIN)]]);
    const stored = await s.t.db.db.selectFrom('agent_events').select('type').where('agent_id', '=', agent).execute();
    expect(stored).toHaveLength(5);
  });

  describe('events endpoints', () => {
    let other: string;
    beforeAll(async () => {
      other = await s.register('second');
      await s.heartbeat(other);
      await monitor.runOnce(); // `other` online at 40:01
    });

    it('GET /agents/events lists every agent’s events, newest first', async () => {
      const all = await s.events('/agents/events');
      expect(all.map((e) => [e.agent_id, e.type])).toEqual([
        [other, 'online'],
        [agent, 'offline'],
        [agent, 'online'],
        [agent, 'offline'],
        [agent, 'stale'],
        [agent, 'online'],
      ]);
      expect(all[0]).toEqual({ id: expect.any(Number), agent_id: other, type: 'online', created_at: at(40 * MIN + SEC) });
      expect(Object.keys(all[0]!).sort()).toEqual(['agent_id', 'created_at', 'id', 'type']);
    });

    it('filters by type, on all agents and on one', async () => {
      expect((await s.events('/agents/events?type=online')).map((e) => [e.agent_id, e.created_at])).toEqual([
        [other, at(40 * MIN + SEC)],
        [agent, at(30 * MIN)],
        [agent, at(0)],
      ]);
      expect((await s.events(`/agents/${agent}/events?type=offline`)).map((e) => e.created_at)).toEqual([at(40 * MIN + SEC), at(5 * MIN + SEC)]);
      expect(await s.events(`/agents/${agent}/events?type=connected`)).toEqual([]);
    });

    it('returns the newest `limit` events', async () => {
      expect((await s.events('/agents/events?limit=2')).map((e) => [e.agent_id, e.type])).toEqual([[other, 'online'], [agent, 'offline']]);
      expect((await s.events(`/agents/${agent}/events?limit=3`)).map((e) => e.type)).toEqual(['offline', 'online', 'offline']);
      expect(await s.events('/agents/events?limit=5000')).toHaveLength(6);
    });

    it.each([
      ['type=bogus', 'an unknown type'],
      ['limit=0', 'a limit below 1'],
      ['limit=-1', 'a negative limit'],
      ['limit=2.5', 'a non-integer limit'],
      ['limit=ten', 'a non-numeric limit'],
    ])('refuses %s (%s) with 400', async (query) => {
      expectError(await s.call(`/agents/events?${query}`), 400, 'VALIDATION_ERROR');
      expectError(await s.call(`/agents/${agent}/events?${query}`), 400, 'VALIDATION_ERROR');
    });

    it('answers 404 for the events of an unknown agent', async () => {
      expectError(await s.call(`/agents/${'0'.repeat(32)}/events`), 404, 'NOT_FOUND');
    });
  });

  describe('the loop', () => {
    const INTERVAL = 45 * SEC;
    let loopAgent: string;
    let start: number;
    const since = (ms: number) => new Date(start + ms).toISOString();
    /** Waits (on the database work, not on time) until the loop is asleep on the clock again. */
    const asleep = () => vi.waitFor(() => expect(s.clock.pendingSleepers).toBe(1), { timeout: 10_000, interval: 1 });

    beforeAll(async () => {
      await monitor.runOnce(); // settle the agents of earlier tests, so only loopAgent changes below
      loopAgent = await s.register('looped');
      start = s.clock.now().getTime();
      await s.heartbeat(loopAgent);
    });

    it('checks at once on start(), then every interval on the clock, and stop() ends it', async () => {
      expect(s.clock.pendingSleepers).toBe(0);
      const loop = new StatusMonitor(s.t.db.db, s.clock, INTERVAL, silent);
      loop.start();
      await asleep();
      expect(await s.history(loopAgent)).toEqual([['online', since(0)]]);

      // Checks at 45, 90, 135 s: the first that sees age ≥ 2:00 is the one at 2:15.
      for (let i = 0; i < 3; i++) {
        await s.clock.advance(INTERVAL);
        await asleep();
      }
      expect(await s.history(loopAgent)).toEqual([['stale', since(3 * INTERVAL)], ['online', since(0)]]);

      // Checks at 3:00 ... 5:15: the first with age > 5:00 is at 5:15 (7 intervals).
      for (let i = 3; i < 7; i++) {
        await s.clock.advance(INTERVAL);
        await asleep();
      }
      expect((await s.history(loopAgent))[0]).toEqual(['offline', since(7 * INTERVAL)]);

      await loop.stop();
      expect(s.clock.pendingSleepers).toBe(0);
      await s.heartbeat(loopAgent);
      await s.clock.advance(10 * INTERVAL);
      expect(await s.history(loopAgent)).toEqual([['offline', since(7 * INTERVAL)], ['stale', since(3 * INTERVAL)], ['online', since(0)]]);
    });
  });
});
