// /api/v1/maintenance-windows on the real server (issue 31): the 201 shape, active_now and next_start
// on the FakeClock for one-off and cron windows, validation details (exactly one form), scope (a scoped
// key sees global windows read-only, others' are 404), read keys, PUT as full replacement, delete,
// filters (active too), audit, and the engine's questions: activeWindow and coveringWindows for an
// agent's own, its customer's and a global window, the matcher answering without further queries.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MaintenanceWindowService } from '../src/modules/maintenance/maintenance-windows.service.js';
import { FakeClock } from '../src/platform/clock.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';

interface Win {
  id: number; name: string; customer_id: number | null; agent_id: string | null; starts_at: string | null; ends_at: string | null;
  cron: string | null; duration_minutes: number | null; active_now: boolean; next_start: string | null; created_at: string; updated_at: string;
}
type ErrorBody = { code: string; details?: Array<{ path: string; message: string }> };

const FIELDS = ['id', 'name', 'customer_id', 'agent_id', 'starts_at', 'ends_at', 'cron', 'duration_minutes', 'active_now', 'next_start', 'created_at', 'updated_at'];
// 2026-07-01 is a Wednesday.
const clock = new FakeClock('2026-07-01T08:00:00Z');
let s: LiveServer;
let admin: Record<string, string>;
let [writeKey, readKey, scopedA, agentA, agentA2, agentB, loose] = ['', '', '', '', '', '', ''];
let [customerA, customerB] = [0, 0];

async function call(who: string | Record<string, string>, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) {
  const headers = typeof who === 'string' ? apiKey(who) : who;
  const res = await s.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.json() as unknown };
}
async function created(payload: object, who: string | Record<string, string> = writeKey): Promise<Win> {
  const res = await call(who, 'POST', '/maintenance-windows', payload);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as Win;
}
const get = async (id: number) => (await call(writeKey, 'GET', `/maintenance-windows/${id}`)).body as Win;
const list = async (query = '', who: string | Record<string, string> = writeKey) => (await call(who, 'GET', `/maintenance-windows${query}`)).body as Win[];
const oneOff = (starts_at: string, ends_at: string, extra: object = {}) => ({ name: 'Patch night', starts_at, ends_at, ...extra });
const nightly = (extra: object = {}) => ({ name: 'Nightly', cron: '0 2 * * *', duration_minutes: 60, ...extra });

beforeAll(async () => {
  s = await startLiveServer({ clock });
  const token = await adminToken(s);
  admin = bearer(token);
  customerA = (await createCustomer(s.app, token, 'M-1')).id;
  customerB = (await createCustomer(s.app, token, 'M-2')).id;
  writeKey = (await createKey(s.app, admin, 'write')).key;
  readKey = (await createKey(s.app, admin, 'read')).key;
  scopedA = (await createKey(s.app, admin, 'write', customerA)).key;
  const keyA = (await createKey(s.app, admin, 'agent', customerA)).key;
  agentA = await s.register(keyA, 'fw-a');
  agentA2 = await s.register(keyA, 'fw-a2');
  agentB = await s.register((await createKey(s.app, admin, 'agent', customerB)).key, 'fw-b');
  loose = await s.register((await createKey(s.app, admin, 'agent')).key, 'fw-loose');
});
afterAll(() => s?.close());

describe('timing on the clock', () => {
  it('a one-off window: 201 with every field, then open from starts_at up to ends_at', async () => {
    clock.set('2026-07-01T08:00:00Z');
    const w = await created(oneOff('2026-07-01T10:00:00Z', '2026-07-01T12:00:00Z', { name: '  Firmware  ', customer_id: customerA }));
    expect(Object.keys(w).sort()).toEqual([...FIELDS].sort());
    expect(w).toMatchObject({ name: 'Firmware', customer_id: customerA, agent_id: null, starts_at: '2026-07-01T10:00:00.000Z', ends_at: '2026-07-01T12:00:00.000Z', cron: null, duration_minutes: null });
    expect(w).toMatchObject({ active_now: false, next_start: '2026-07-01T10:00:00.000Z', created_at: clock.now().toISOString(), updated_at: clock.now().toISOString() });
    await clock.advance(2 * 3_600_000); // 10:00
    expect(await get(w.id)).toMatchObject({ active_now: true, next_start: null });
    await clock.advance(2 * 3_600_000 - 1); // 11:59:59.999
    expect((await get(w.id)).active_now).toBe(true);
    await clock.advance(1); // 12:00
    expect(await get(w.id)).toMatchObject({ active_now: false, next_start: null });
  });

  it('a cron window: open for duration_minutes from each match (UTC), next_start the next match after now', async () => {
    clock.set('2026-07-01T08:00:00Z');
    const w = await created(nightly());
    expect(w).toMatchObject({ cron: '0 2 * * *', duration_minutes: 60, starts_at: null, ends_at: null, active_now: false, next_start: '2026-07-02T02:00:00.000Z' });
    clock.set('2026-07-02T02:00:00Z');
    expect(await get(w.id)).toMatchObject({ active_now: true, next_start: '2026-07-03T02:00:00.000Z' });
    clock.set('2026-07-02T02:59:59.999Z');
    expect((await get(w.id)).active_now).toBe(true);
    clock.set('2026-07-02T03:00:00Z');
    expect((await get(w.id)).active_now).toBe(false);
    // The list filter decides "active" at the same clock.
    clock.set('2026-07-03T02:30:00Z');
    expect((await list('?active=true')).map((x) => x.id)).toContain(w.id);
    expect((await list('?active=false')).map((x) => x.id)).not.toContain(w.id);
    expect((await list('?active=true')).every((x) => x.active_now)).toBe(true);
    expect((await list('?active=false')).every((x) => !x.active_now)).toBe(true);
    await call(writeKey, 'DELETE', `/maintenance-windows/${w.id}`);
  });
});

describe('validation', () => {
  it.each([
    ['neither form', { name: 'x' }, 'starts_at'],
    ['both forms', { ...oneOff('2026-07-01T10:00:00Z', '2026-07-01T11:00:00Z'), cron: '0 2 * * *', duration_minutes: 30 }, 'cron'],
    ['starts_at without ends_at', { name: 'x', starts_at: '2026-07-01T10:00:00Z' }, 'ends_at'],
    ['ends_at without starts_at', { name: 'x', ends_at: '2026-07-01T10:00:00Z' }, 'starts_at'],
    ['ends_at equal to starts_at', oneOff('2026-07-01T10:00:00Z', '2026-07-01T10:00:00Z'), 'ends_at'],
    ['ends_at before starts_at', oneOff('2026-07-01T10:00:00Z', '2026-07-01T09:00:00Z'), 'ends_at'],
    ['an unparseable starts_at', oneOff('tonight', '2026-07-01T10:00:00Z'), 'starts_at'],
    ['cron without duration', { name: 'x', cron: '0 2 * * *' }, 'duration_minutes'],
    ['duration without cron', { name: 'x', duration_minutes: 30 }, 'cron'],
    ['a cron of three fields', nightly({ cron: '0 2 *' }), 'cron'],
    ['a six-field cron', nightly({ cron: '0 0 2 * * *' }), 'cron'],
    ['a minute of 61', nightly({ cron: '61 2 * * *' }), 'cron'],
    ['a duration of 0', nightly({ duration_minutes: 0 }), 'duration_minutes'],
    ['a duration of 10081', nightly({ duration_minutes: 10_081 }), 'duration_minutes'],
    ['a blank name', nightly({ name: '  ' }), 'name'],
    ['both customer_id and agent_id', nightly({ customer_id: 1, agent_id: 'a'.repeat(16) }), 'agent_id'],
  ])('refuses %s with 400 naming the field, and creates nothing', async (_what, payload, path) => {
    const before = (await list()).length;
    const res = await call(writeKey, 'POST', '/maintenance-windows', payload);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect((res.body as ErrorBody).code).toBe('VALIDATION_ERROR');
    expect((res.body as ErrorBody).details?.map((d) => d.path)).toContain(path);
    expect((await list()).length).toBe(before);
  });

  it('404 for an unknown customer or agent', async () => {
    expect((await call(writeKey, 'POST', '/maintenance-windows', nightly({ customer_id: 999_999 }))).status).toBe(404);
    expect((await call(writeKey, 'POST', '/maintenance-windows', nightly({ agent_id: 'f'.repeat(32) }))).status).toBe(404);
  });
});

describe('scope and permissions', () => {
  it('a scoped key creates windows for its customer and its agents; 404 for others’, 403 for a global one', async () => {
    expect((await created(nightly({ customer_id: customerA }), scopedA)).customer_id).toBe(customerA);
    expect((await created(nightly({ agent_id: agentA }), scopedA)).agent_id).toBe(agentA);
    expect((await call(scopedA, 'POST', '/maintenance-windows', nightly({ customer_id: customerB }))).status).toBe(404);
    expect((await call(scopedA, 'POST', '/maintenance-windows', nightly({ agent_id: agentB }))).status).toBe(404);
    expect((await call(scopedA, 'POST', '/maintenance-windows', nightly({ agent_id: loose }))).status).toBe(404);
    expect((await call(scopedA, 'POST', '/maintenance-windows', nightly())).status).toBe(403);
  });

  it('a scoped key sees its own and global windows; others’ are 404; global ones are read-only', async () => {
    const global = await created(nightly({ name: 'everyone' }));
    const hidden = [await created(nightly({ customer_id: customerB })), await created(nightly({ agent_id: agentB })), await created(nightly({ agent_id: loose }))];
    const visible = (await list('', scopedA)).map((w) => w.id);
    expect(visible).toContain(global.id);
    for (const w of hidden) {
      expect(visible).not.toContain(w.id);
      expect((await call(scopedA, 'GET', `/maintenance-windows/${w.id}`)).status).toBe(404);
      expect((await call(scopedA, 'PUT', `/maintenance-windows/${w.id}`, nightly({ customer_id: customerA }))).status).toBe(404);
      expect((await call(scopedA, 'DELETE', `/maintenance-windows/${w.id}`)).status).toBe(404);
    }
    expect((await call(scopedA, 'GET', `/maintenance-windows/${global.id}`)).status).toBe(200);
    expect((await call(scopedA, 'PUT', `/maintenance-windows/${global.id}`, nightly({ customer_id: customerA }))).status).toBe(403);
    expect((await call(scopedA, 'DELETE', `/maintenance-windows/${global.id}`)).status).toBe(403);
  });

  it('a read key lists and reads but cannot create, change or delete (403)', async () => {
    const w = await created(nightly());
    expect((await call(readKey, 'GET', '/maintenance-windows')).status).toBe(200);
    expect((await call(readKey, 'GET', `/maintenance-windows/${w.id}`)).status).toBe(200);
    expect((await call(readKey, 'POST', '/maintenance-windows', nightly())).status).toBe(403);
    expect((await call(readKey, 'PUT', `/maintenance-windows/${w.id}`, nightly())).status).toBe(403);
    expect((await call(readKey, 'DELETE', `/maintenance-windows/${w.id}`)).status).toBe(403);
  });
});

describe('replacing, deleting, listing', () => {
  it('PUT replaces the whole window (here one-off to recurring and customer to agent), keeping created_at', async () => {
    clock.set('2026-07-01T08:00:00Z');
    const w = await created(oneOff('2026-07-01T10:00:00Z', '2026-07-01T11:00:00Z', { customer_id: customerA }));
    clock.set('2026-07-01T09:00:00Z');
    const res = await call(writeKey, 'PUT', `/maintenance-windows/${w.id}`, { name: 'Weekly', agent_id: agentA, cron: '0 9 * * 3', duration_minutes: 30 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ ...w, name: 'Weekly', customer_id: null, agent_id: agentA, starts_at: null, ends_at: null, cron: '0 9 * * 3', duration_minutes: 30, active_now: true, next_start: '2026-07-08T09:00:00.000Z', updated_at: '2026-07-01T09:00:00.000Z' });
    expect((await call(writeKey, 'PUT', `/maintenance-windows/${w.id}`, { name: 'broken' })).status).toBe(400);
    expect((await call(writeKey, 'PUT', '/maintenance-windows/2000000', nightly())).status).toBe(404);
  });

  it('DELETE answers ok and the window is gone; every change is in the audit log', async () => {
    const w = await created(nightly());
    await call(writeKey, 'PUT', `/maintenance-windows/${w.id}`, nightly({ name: 'renamed' }));
    expect(await call(writeKey, 'DELETE', `/maintenance-windows/${w.id}`)).toEqual({ status: 200, body: { ok: true } });
    expect((await call(writeKey, 'GET', `/maintenance-windows/${w.id}`)).status).toBe(404);
    expect((await call(writeKey, 'DELETE', `/maintenance-windows/${w.id}`)).status).toBe(404);
    await vi.waitFor(async () => {
      const rows = await s.db.db.selectFrom('audit_log').select('action').where('path', 'like', '/api/v1/maintenance-windows%').execute();
      expect(new Set(rows.map((r) => r.action))).toEqual(new Set(['maintenance_window.create', 'maintenance_window.update', 'maintenance_window.delete']));
    });
  });

  it('filters by customer (its windows and its agents’) and agent, in id order', async () => {
    const ofA = await created(nightly({ customer_id: customerA }));
    const ofAgent = await created(nightly({ agent_id: agentA2 }));
    const ofCustomer = await list(`?customer_id=${customerA}`);
    expect(ofCustomer.map((w) => w.id)).toEqual(expect.arrayContaining([ofA.id, ofAgent.id]));
    expect(ofCustomer.every((w) => w.customer_id === customerA || w.agent_id === agentA || w.agent_id === agentA2)).toBe(true);
    expect((await list(`?agent_id=${agentA2}`)).map((w) => w.id)).toEqual([ofAgent.id]);
    const all = (await list()).map((w) => w.id);
    expect(all).toEqual([...all].sort((x, y) => x - y));
    expect((await list('?limit=2')).map((w) => w.id)).toEqual(all.slice(0, 2));
  });
});

describe('which window covers an agent (the engine’s questions)', () => {
  it('its own window first, then its customer’s, then a global one; coveringWindows answers the same from one read', async () => {
    await s.db.db.deleteFrom('maintenance_windows').execute();
    clock.set('2026-08-03T08:00:00Z');
    const own = await created(oneOff('2026-08-03T10:00:00Z', '2026-08-03T11:00:00Z', { name: 'own', agent_id: agentA }));
    const customers = await created({ name: 'customer', customer_id: customerA, cron: '0 12 * * *', duration_minutes: 60 });
    const global = await created(oneOff('2026-08-03T10:30:00Z', '2026-08-03T15:00:00Z', { name: 'global' }));
    const service = new MaintenanceWindowService(s.db.db, clock);
    const a = { id: agentA, customer_id: customerA };
    const a2 = { id: agentA2, customer_id: customerA };
    const b = { id: agentB, customer_id: customerB };
    const free = { id: loose, customer_id: null };
    const hit = (w: Win | null) => (w ? { id: w.id, name: w.name } : null);
    const expected: Array<[string, Array<Win | null>]> = [
      ['2026-08-03T09:59:59Z', [null, null, null, null]],
      ['2026-08-03T10:15:00Z', [own, null, null, null]],
      ['2026-08-03T10:45:00Z', [own, global, global, global]],
      ['2026-08-03T12:15:00Z', [customers, customers, global, global]],
      ['2026-08-03T15:00:00Z', [null, null, null, null]],
      ['2026-08-04T12:59:00Z', [customers, customers, null, null]],
    ];
    for (const [at, wins] of expected) {
      const time = new Date(at);
      const matcher = await service.coveringWindows(time);
      for (const [i, agent] of [a, a2, b, free].entries()) {
        expect(await service.activeWindow(agent, time), `${at} agent ${i}`).toEqual(hit(wins[i]!));
        expect(matcher.covers(agent), `${at} agent ${i} (matcher)`).toEqual(hit(wins[i]!));
      }
    }
    // The matcher read every window once: with the table emptied it still answers for its time.
    const matcher = await service.coveringWindows(new Date('2026-08-03T10:45:00Z'));
    await s.db.db.deleteFrom('maintenance_windows').execute();
    expect(matcher.covers(a2)).toEqual(hit(global));
    expect(await service.activeWindow(a2, new Date('2026-08-03T10:45:00Z'))).toBeNull();
  });
});
