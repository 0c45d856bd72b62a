// The audit log as an operator reads it through GET /audit (contract §10): every change by a user or an
// API key (named by its hint, never the key), logins and 2FA changes, refused requests of known callers,
// nothing for reads or for anonymous callers; and the list's order, filters and limit rules.
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createCustomer, createKey, login, seedUser } from './helpers/identity.js';

interface AuditEntry {
  id: number;
  time: string;
  actor_type: 'user' | 'api_key';
  actor: string;
  action: string;
  method: string;
  path: string;
  status_code: number;
  ip: string;
  target: string | null;
}

// A fake clock gives every entry a known time, so `time`, ordering and from/to can be checked exactly.
const clock = new FakeClock('2026-03-01T08:00:00Z');
let t: TestApp;
let admin: string;

beforeAll(async () => {
  t = await buildTestApp({ clock });
  admin = await adminToken(t);
});
afterAll(() => t.close());

async function auditLog(query = '', headers: Record<string, string> = bearer(admin)): Promise<AuditEntry[]> {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/audit${query}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** The newest entry id so far; the tests share one log, so each looks only at what it caused. */
async function mark(): Promise<number> {
  return Math.max(0, ...(await auditLog('?limit=1000')).map((e) => e.id));
}

/** Entries written after `since`, oldest first. */
async function entriesAfter(since: number): Promise<AuditEntry[]> {
  return (await auditLog('?limit=1000')).filter((e) => e.id > since).reverse();
}

const entry = (fields: Partial<AuditEntry>) => ({
  id: expect.any(Number),
  time: clock.now().toISOString(),
  ip: expect.stringMatching(/.+/),
  // The object's name is checked in audit-targets.test.ts; here only that it is there.
  target: expect.anything(),
  ...fields,
});

/** The entry of POST /customers by an API key. */
const keyCreatedCustomer = (keyHint: string, status_code: number) =>
  // A refused creation made no customer, so names none.
  entry({ actor_type: 'api_key', actor: keyHint, action: 'customer.create', method: 'POST', path: '/api/v1/customers', status_code, ...(status_code >= 400 ? { target: null } : {}) });

let customerNumber = 1000;
const newCustomer = () => ({ number: String(++customerNumber), name: `Audit customer ${customerNumber}` });

describe('what is recorded', () => {
  it('records a customer created by a user once, with the path but not the query string', async () => {
    const since = await mark();
    await clock.advance(1000);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/customers?source=audit-test',
      headers: bearer(admin),
      payload: newCustomer(),
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(await entriesAfter(since)).toEqual([
      entry({ actor_type: 'user', actor: 'admin', action: 'customer.create', method: 'POST', path: '/api/v1/customers', status_code: 201 }),
    ]);
  });

  it('has the entry of a change in the log as soon as the change has been answered', async () => {
    await clock.advance(1000);
    const start = clock.now().toISOString();
    for (let created = 1; created <= 10; created++) {
      await createCustomer(t.app, admin, newCustomer().number);
      const entries = await auditLog(`?action=customer.create&from=${start}`);
      expect(entries.length, `entries after ${created} answered creations`).toBe(created);
    }
  });

  it('names an API key caller by its key_hint, whether the key came in the header or the query', async () => {
    const key = await createKey(t.app, bearer(admin), 'write');
    const since = await mark();
    await clock.advance(1000);
    const viaHeader = await t.app.inject({ method: 'POST', url: '/api/v1/customers', headers: apiKey(key.key), payload: newCustomer() });
    const viaQuery = await t.app.inject({
      method: 'POST',
      url: `/api/v1/customers?api_key=${key.key}`,
      payload: newCustomer(),
    });
    expect([viaHeader.statusCode, viaQuery.statusCode]).toEqual([201, 201]);

    const expected = keyCreatedCustomer(key.key_hint, 201);
    expect(await entriesAfter(since)).toEqual([expected, expected]);
    const raw = (await t.app.inject({ method: 'GET', url: '/api/v1/audit?limit=1000', headers: bearer(admin) })).body;
    expect(raw).not.toContain(key.key);
  });

  it('does not record reads', async () => {
    const key = await createKey(t.app, bearer(admin), 'read');
    const since = await mark();
    for (const url of ['/api/v1/customers', '/api/v1/auth/me', '/api/v1/users', '/api/v1/apikeys', '/api/v1/settings']) {
      for (const headers of [bearer(admin), apiKey(key.key)]) {
        expect((await t.app.inject({ method: 'GET', url, headers })).statusCode).toBe(200);
      }
    }
    expect(await entriesAfter(since)).toEqual([]);
  });

  it('records successful and failed logins, also for an unknown username', async () => {
    await seedUser(t, 'erin', 'erin-password-1');
    const since = await mark();
    await clock.advance(1000);
    const attempt = (username: string, password: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password } });
    expect((await attempt('erin', 'erin-password-1')).statusCode).toBe(200);
    expect((await attempt('erin', 'wrong-password')).statusCode).toBe(401);
    expect((await attempt('nobody-here', 'whatever-1')).statusCode).toBe(401);

    const login = { actor_type: 'user', method: 'POST', path: '/api/v1/auth/login' } as const;
    expect(await entriesAfter(since)).toEqual([
      entry({ ...login, actor: 'erin', action: 'auth.login', status_code: 200 }),
      entry({ ...login, actor: 'erin', action: 'auth.login_failed', status_code: 401 }),
      entry({ ...login, actor: 'nobody-here', action: 'auth.login_failed', status_code: 401 }),
    ]);
  });

  it('records 2FA setup, confirmation and removal', async () => {
    await seedUser(t, 'dana', 'dana-password-1');
    const token = await login(t.app, 'dana', 'dana-password-1');
    const code = (secret: string) => generate({ secret, epoch: Math.floor(clock.now().getTime() / 1000) });
    const post = (url: string, payload: object) => t.app.inject({ method: 'POST', url, headers: bearer(token), payload });
    const since = await mark();
    const enrolledAt = clock.now().toISOString();

    const setup = await post('/api/v1/auth/2fa/setup', {});
    expect(setup.statusCode, setup.body).toBe(200);
    const { secret } = setup.json() as { secret: string };
    const confirm = await post('/api/v1/auth/2fa/confirm', { code: await code(secret) });
    expect(confirm.statusCode, confirm.body).toBe(200);
    // The next code must come from a later time step: each step is accepted only once.
    await clock.advance(30_000);
    const disable = await post('/api/v1/auth/2fa/disable', { password: 'dana-password-1', code: await code(secret) });
    expect(disable.statusCode, disable.body).toBe(200);

    const base = { actor_type: 'user', actor: 'dana', method: 'POST', status_code: 200 } as const;
    expect(await entriesAfter(since)).toEqual([
      entry({ ...base, action: 'auth.2fa_setup', path: '/api/v1/auth/2fa/setup', time: enrolledAt }),
      entry({ ...base, action: 'auth.2fa_enabled', path: '/api/v1/auth/2fa/confirm', time: enrolledAt }),
      entry({ ...base, action: 'auth.2fa_disabled', path: '/api/v1/auth/2fa/disable' }),
    ]);
  });

  it('records a forbidden change by a known key with 403, and nothing for anonymous or unknown callers', async () => {
    const key = await createKey(t.app, bearer(admin), 'read');
    const since = await mark();
    await clock.advance(1000);
    const forbidden = await t.app.inject({ method: 'POST', url: '/api/v1/customers', headers: apiKey(key.key), payload: newCustomer() });
    expect(forbidden.statusCode).toBe(403);
    const anonymous = await t.app.inject({ method: 'POST', url: '/api/v1/customers', payload: newCustomer() });
    expect(anonymous.statusCode).toBe(401);
    const unknownKey = await t.app.inject({
      method: 'POST',
      url: '/api/v1/customers',
      headers: apiKey(`rmm_${'x'.repeat(40)}`),
      payload: newCustomer(),
    });
    expect(unknownKey.statusCode).toBe(401);

    expect(await entriesAfter(since)).toEqual([keyCreatedCustomer(key.key_hint, 403)]);
  });
});

describe('GET /audit', () => {
  it('lists newest first, and limit=1 returns only the newest entry', async () => {
    for (let i = 0; i < 3; i++) {
      await clock.advance(1000);
      await createCustomer(t.app, admin, newCustomer().number);
    }
    const all = await auditLog();
    expect(all.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < all.length; i++) {
      expect(all[i - 1]!.time >= all[i]!.time).toBe(true);
      expect(all[i - 1]!.id).toBeGreaterThan(all[i]!.id);
    }
    expect(all[0]).toMatchObject({ action: 'customer.create', time: clock.now().toISOString() });
    expect(await auditLog('?limit=1')).toEqual([all[0]]);
  });

  it('filters by actor and by action', async () => {
    const key = await createKey(t.app, bearer(admin), 'write');
    await clock.advance(1000);
    await createCustomer(t.app, admin, newCustomer().number);
    await t.app.inject({ method: 'POST', url: '/api/v1/customers', headers: apiKey(key.key), payload: newCustomer() });

    const byKey = await auditLog(`?actor=${encodeURIComponent(key.key_hint)}`);
    expect(byKey).toEqual([keyCreatedCustomer(key.key_hint, 201)]);
    const byAdmin = await auditLog('?actor=admin&limit=1000');
    expect(byAdmin.length).toBeGreaterThan(1);
    expect(new Set(byAdmin.map((e) => e.actor))).toEqual(new Set(['admin']));

    await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'frank', password: 'not-his-1' } });
    const failed = await auditLog('?action=auth.login_failed&limit=1000');
    expect(failed[0]).toMatchObject({ actor: 'frank', status_code: 401 });
    expect(new Set(failed.map((e) => e.action))).toEqual(new Set(['auth.login_failed']));
    expect(await auditLog('?action=no.such.action')).toEqual([]);
  });

  it('filters by time with from and to', async () => {
    await clock.advance(3_600_000);
    await createCustomer(t.app, admin, newCustomer().number);
    const first = (await auditLog('?limit=1'))[0]!;
    await clock.advance(3_600_000);
    await createCustomer(t.app, admin, newCustomer().number);
    const second = (await auditLog('?limit=1'))[0]!;

    const at = (entryTime: string, minutes: number) => new Date(Date.parse(entryTime) + minutes * 60_000).toISOString();
    expect(await auditLog(`?from=${at(first.time, -30)}&to=${at(first.time, 30)}`)).toEqual([first]);
    expect(await auditLog(`?from=${at(first.time, 30)}`)).toEqual([second]);
    const upToFirst = await auditLog(`?to=${at(first.time, 30)}&limit=1000`);
    expect(upToFirst[0]).toEqual(first);
    expect(upToFirst.map((e) => e.id)).not.toContain(second.id);
  });

  it('rejects a limit below 1, a non-integer limit and a malformed time with 400', async () => {
    for (const query of ['?limit=0', '?limit=abc', '?limit=1.5', '?limit=-3', '?from=yesterday', '?to=2026-03-01']) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/audit${query}`, headers: bearer(admin) });
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', request_id: res.headers['x-request-id'] });
    }
  });

  it('is readable with a read key; a customer-scoped key reads only the entries about its customer', async () => {
    const reader = await createKey(t.app, bearer(admin), 'read');
    expect((await auditLog('?limit=1', apiKey(reader.key))).length).toBe(1);

    const customer = await createCustomer(t.app, admin, newCustomer().number);
    const other = await createCustomer(t.app, admin, newCustomer().number);
    const scoped = await createKey(t.app, bearer(admin), 'admin', customer.id);
    for (const c of [customer, other]) {
      const renamed = await t.app.inject({ method: 'PUT', url: `/api/v1/customers/${c.id}`, headers: bearer(admin), payload: { name: `Renamed ${c.number}` } });
      expect(renamed.statusCode, renamed.body).toBe(200);
    }
    const seen = await auditLog('', apiKey(scoped.key));
    expect(seen.length).toBeGreaterThan(0);
    // Its customer's creation and rename, and its own key's creation: nothing else.
    expect(seen.filter((e) => !e.target?.startsWith(`customer ${customer.number} `) && !e.target?.includes(scoped.key_hint))).toEqual([]);
    expect(seen.map((e) => e.action).sort()).toEqual(['apikey.create', 'customer.create', 'customer.update']);
    expect(seen.some((e) => e.action === 'customer.update' && e.target === `customer ${customer.number} Renamed ${customer.number}`)).toBe(true);
    expect(seen.some((e) => e.target?.includes(other.number))).toBe(false);
  });

  it('clamps a limit above the maximum to 1000 instead of rejecting it', async () => {
    // More than 1000 entries must exist for the clamp to show; refused key requests are the cheapest ones.
    const reader = await createKey(t.app, bearer(admin), 'read');
    const missing = 1001 - (await auditLog('?limit=1000')).length;
    for (let done = 0; done < missing; done += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, missing - done) }, () =>
          t.app.inject({ method: 'DELETE', url: '/api/v1/customers/1', headers: apiKey(reader.key) }),
        ),
      );
    }
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/audit?limit=5000', headers: bearer(admin) });
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as AuditEntry[]).length).toBe(1000);
  }, 60_000);
});
