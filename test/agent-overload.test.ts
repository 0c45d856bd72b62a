// An overloaded server refuses agents at once instead of queueing work it cannot finish: past its bound
// of registrations and heartbeats in progress, the next one gets 503 SERVICE_UNAVAILABLE with
// Retry-After, in the contract's error body, and changes nothing; once the held ones are answered,
// agents are let through again. Registrations have a smaller bound of their own, which heartbeats pass.
// The database is held with a transaction that locks the agent's row or the agents table (PostgreSQL)
// and, on PGlite, holds its one connection.
import { setTimeout as delay } from 'node:timers/promises';
import { sql, type Transaction } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';

const MAX_IN_FLIGHT = 2;
let t: TestApp;
let key: string;
let agentId: string;

const heartbeat = () =>
  t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: apiKey(key), payload: { agent_id: agentId, platform: 'linux', hostname: 'pve-held' } });

beforeAll(async () => {
  t = await buildTestApp({ maxAgentRequestsInFlight: MAX_IN_FLIGHT });
  key = (await createKey(t.app, bearer(await adminToken(t)), 'agent')).key;
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(key), payload: { hostname: 'pve-held', platform: 'linux' } });
  agentId = (res.json() as { agent_id: string }).agent_id;
  // The key's check is cached from here on, so a request needs the database only for its own work.
  expect((await heartbeat()).statusCode).toBe(200);
});
afterAll(() => t.close());

/** Runs `lock` in a transaction that stays open until `release`; resolves once the lock is taken. */
async function holdDatabase(app: TestApp, lock: (trx: Transaction<Database>) => Promise<unknown>) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const taken = new Promise<void>((resolve) => (locked = resolve));
  const hold = app.db.db.transaction().execute(async (trx) => {
    await lock(trx);
    locked();
    await released;
  });
  await taken;
  return { release, hold };
}

describe('agents against an overloaded server', () => {
  it('refuses registrations and heartbeats past the bound with 503 and Retry-After, then lets them through again', async () => {
    // Only once the row is held: heartbeats sent earlier could be written (and answered) before the lock.
    const { release, hold } = await holdDatabase(t, (trx) => trx.selectFrom('agents').select('id').where('id', '=', agentId).forUpdate().execute());
    const held = [heartbeat(), heartbeat()];
    // Should a request be let through by mistake it would wait for the lock forever: this ends the hold
    // (the assertions below then fail) instead of hanging the test.
    const giveUp = setTimeout(release, 10_000);
    let refusedHeartbeat, refusedRegistration;
    try {
      // The held heartbeats are past their admission as soon as they started; give them that moment.
      await delay(500);
      refusedHeartbeat = await heartbeat();
      refusedRegistration = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(key), payload: { hostname: 'fw-refused', platform: 'freebsd' } });
    } finally {
      clearTimeout(giveUp);
      release();
    }
    for (const refused of [refusedHeartbeat, refusedRegistration]) {
      expect(refused.statusCode, refused.body).toBe(503);
      expect(refused.headers['retry-after']).toBe('10');
      expect(refused.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE', error: expect.stringContaining('overloaded'), request_id: expect.any(String) });
    }
    await hold;
    expect((await Promise.all(held)).map((r) => r.statusCode)).toEqual([200, 200]);
    const names = await t.db.db.selectFrom('agents').select('hostname').execute();
    expect(names.map((r) => r.hostname)).not.toContain('fw-refused');
    expect((await heartbeat()).statusCode).toBe(200);
    const registered = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(key), payload: { hostname: 'fw-later', platform: 'freebsd' } });
    expect(registered.statusCode, registered.body).toBe(200);
  });
});

describe('registrations past their own bound', () => {
  let r: TestApp;
  let rKey: string;
  let rAgentId: string;
  const register = (hostname: string) => r.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(rKey), payload: { hostname, platform: 'linux' } });

  beforeAll(async () => {
    r = await buildTestApp({ maxRegistrationsInFlight: 1 });
    rKey = (await createKey(r.app, bearer(await adminToken(r)), 'agent')).key;
    rAgentId = ((await register('pve-known')).json() as { agent_id: string }).agent_id;
  });
  afterAll(() => r.close());

  it('refuses a second registration while one is in progress, but not a heartbeat', async () => {
    // New agents cannot be inserted while this holds the table (PostgreSQL) or the one connection (PGlite).
    const { release, hold } = await holdDatabase(r, (trx) => sql`lock table agents in exclusive mode`.execute(trx));
    const held = register('pve-first');
    const giveUp = setTimeout(release, 10_000);
    let refused, beat;
    try {
      await delay(500);
      refused = await register('pve-second');
      beat = r.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: apiKey(rKey), payload: { agent_id: rAgentId, platform: 'linux', hostname: 'pve-known' } });
      await delay(200);
    } finally {
      clearTimeout(giveUp);
      release();
    }
    await hold;
    expect(refused.statusCode, refused.body).toBe(503);
    expect(refused.headers['retry-after']).toBe('10');
    expect(refused.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE', error: expect.stringContaining('overloaded') });
    expect((await held).statusCode).toBe(200);
    expect((await beat).statusCode).toBe(200);
    const names = await r.db.db.selectFrom('agents').select('hostname').execute();
    expect(names.map((n) => n.hostname).sort()).toEqual(['pve-first', 'pve-known']);
    expect((await register('pve-second')).statusCode).toBe(200);
  });
});
