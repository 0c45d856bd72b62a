// History lists reach their oldest entries (issue 29, item 5): events and the audit log page past the
// newest 1,000 with the Link header's cursor (newest first, ties by id); raw metric samples and rates,
// which answer the most recent `limit` in ascending order, link to the older ones before them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertAuditEntries } from '../src/modules/audit/audit.repo.js';
import { insertEvents } from '../src/modules/agents/events.repo.js';
import { FakeClock } from '../src/platform/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';
import { insertAgents, nextLink, walkPages } from './helpers/paging.js';

const EVENTS = 2_500;
const ENTRIES = 2_400;
const AGENT = 'e'.repeat(32);
const OTHER = 'f'.repeat(32);

let t: TestApp;
let reader: Record<string, string>;
let agentKey: Record<string, string>;
const NOW = '2026-05-01T10:00:00Z';
const clock = new FakeClock(NOW);
const minutesAgo = (m: number) => new Date(Date.parse(NOW) - m * 60_000);

beforeAll(async () => {
  t = await buildTestApp({ clock });
  const admin = bearer(await adminToken(t));
  reader = apiKey((await createKey(t.app, admin, 'admin')).key);
  agentKey = apiKey((await createKey(t.app, admin, 'agent')).key);
  await insertAgents(t.db.db, [AGENT, OTHER].map((id, i) => ({ id, name: `agent-${i}`, hostname: 'h', platform: 'linux', customer_id: null, agent_version: null, last_heartbeat: null })));
  // Every third event shares its time with the one before: the id breaks the tie.
  const types = ['online', 'stale', 'offline', 'connected', 'disconnected'] as const;
  await insertEvents(
    t.db.db,
    Array.from({ length: EVENTS }, (_, i) => ({ agent_id: i % 2 ? AGENT : OTHER, type: types[i % 5]!, created_at: minutesAgo(EVENTS - i + (i % 3 === 1 ? 1 : 0)) })),
  );
  await insertAuditEntries(
    t.db.db,
    Array.from({ length: ENTRIES }, (_, i) => ({
      time: minutesAgo(ENTRIES - Math.floor(i / 2)),
      actor_type: 'user' as const,
      actor: i % 4 ? 'alice' : 'bob',
      action: `test.action${i % 3}`,
      method: 'POST',
      path: `/api/v1/thing/${i}`,
      status_code: 200,
      ip: '127.0.0.1',
    })),
  );
}, 60_000);
afterAll(() => t.close());

type Event = { id: number; agent_id: string; type: string; created_at: string };

/** Newest first: time descending, then id descending. */
function expectNewestFirst(list: Array<{ id: number; time: string }>): void {
  for (let i = 1; i < list.length; i++) {
    const [a, b] = [list[i - 1]!, list[i]!];
    expect(a.time > b.time || (a.time === b.time && a.id > b.id), `${JSON.stringify(a)} before ${JSON.stringify(b)}`).toBe(true);
  }
}

describe('events', () => {
  it('GET /agents/events reaches every event, far beyond the newest 1,000', async () => {
    const walk = await walkPages<Event>(t.app, '/api/v1/agents/events?limit=1000', reader);
    expect(walk.urls).toHaveLength(3);
    expect(walk.items).toHaveLength(EVENTS);
    expect(new Set(walk.items.map((e) => e.id)).size).toBe(EVENTS);
    expectNewestFirst(walk.items.map((e) => ({ id: e.id, time: e.created_at })));
    expect(walk.items.at(-1)!.created_at).toBe(minutesAgo(EVENTS).toISOString());
  });

  it('answers 100 by default with a Link; the type filter and the agent hold on every page', async () => {
    const first = await t.app.inject({ method: 'GET', url: '/api/v1/agents/events', headers: reader });
    expect((first.json() as Event[]).length).toBe(100);
    expect(nextLink(first)).toMatch(/^\/api\/v1\/agents\/events\?cursor=/);
    const walk = await walkPages<Event>(t.app, `/api/v1/agents/${AGENT}/events?type=offline&limit=100`, reader);
    expect(walk.items).toHaveLength(EVENTS / 10);
    expect(walk.items.every((e) => e.agent_id === AGENT && e.type === 'offline')).toBe(true);
  });
});

describe('audit log', () => {
  it('GET /audit reaches the oldest entry, newest first with ties by id, filters on every page', async () => {
    const walk = await walkPages<{ id: number; time: string; actor: string }>(t.app, '/api/v1/audit?limit=1000', reader);
    const seeded = walk.items.filter((e) => e.actor === 'alice' || e.actor === 'bob');
    expect(seeded).toHaveLength(ENTRIES);
    expectNewestFirst(walk.items);
    expect(walk.items.at(-1)!.time).toBe(minutesAgo(ENTRIES).toISOString());
    const bob = await walkPages<{ actor: string }>(t.app, '/api/v1/audit?actor=bob&limit=250', reader);
    expect(bob.urls).toHaveLength(3);
    expect(bob.items.every((e) => e.actor === 'bob')).toBe(true);
    expect(bob.items).toHaveLength(ENTRIES / 4);
  });
});

describe('raw metric samples and rates', () => {
  it('rel="next" leads to the older samples before the first returned one, each page ascending', async () => {
    const heartbeats = 6;
    for (let i = heartbeats; i >= 1; i--) {
      clock.set(minutesAgo(i));
      const body = { agent_id: AGENT, platform: 'linux', cpu: { usage_percent: i }, uptime_seconds: 100 + i, network: { interfaces: [{ name: 'em0', rx_bytes: 1000 * (10 - i), tx_bytes: 10 * (10 - i) }] } };
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: agentKey, payload: body });
      expect(res.statusCode, res.body).toBe(200);
    }
    clock.set(NOW);
    type Sample = { time: string; metric: string; label: string };
    const all = (await t.app.inject({ method: 'GET', url: `/api/v1/agents/${AGENT}/metrics`, headers: reader })).json() as Sample[];
    expect(all.length).toBeGreaterThan(heartbeats * 3);
    const pages: Sample[][] = [];
    let next: string | undefined = `/api/v1/agents/${AGENT}/metrics?limit=7`;
    while (next) {
      const res = await t.app.inject({ method: 'GET', url: next, headers: reader });
      pages.push(res.json() as Sample[]);
      next = nextLink(res);
    }
    const key = (s: Sample) => `${s.time} ${s.metric} ${s.label}`;
    for (let p = 1; p < pages.length; p++) expect(key(pages[p]!.at(-1)!) < key(pages[p - 1]![0]!)).toBe(true);
    for (const page of pages) expect(page.map(key)).toEqual([...page.map(key)].sort());
    expect(pages.reverse().flat()).toEqual(all);

    const rates = (await t.app.inject({ method: 'GET', url: `/api/v1/agents/${AGENT}/metrics/rates`, headers: reader })).json() as unknown[];
    expect(rates).toHaveLength(heartbeats - 1);
    const first = await t.app.inject({ method: 'GET', url: `/api/v1/agents/${AGENT}/metrics/rates?limit=2`, headers: reader });
    const older = await walkPages(t.app, nextLink(first)!, reader);
    expect([...older.bodies.reverse().flatMap((b) => JSON.parse(b) as unknown[]), ...(first.json() as unknown[])]).toEqual(rates);
  });
});
