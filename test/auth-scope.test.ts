// Customer scope (contract §1, acceptance 4): an admin key scoped to customer A sees and changes only
// A and A's keys; B and unscoped keys are "not found" (existence is not leaked), it cannot widen its
// scope, and server-wide resources (users, settings, audit, creating customers) are refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { expectError } from './helpers/assertions.js';

type Customer = Awaited<ReturnType<typeof createCustomer>>;
type Key = Awaited<ReturnType<typeof createKey>>;

let t: TestApp;
let token: string;
let a: Customer;
let b: Customer;
let scopedA: Key;
let otherA: Key;
let keyB: Key;
let unscoped: Key;

beforeAll(async () => {
  t = await buildTestApp();
  token = await adminToken(t);
  a = await createCustomer(t.app, token, '4001', 'Alpha');
  b = await createCustomer(t.app, token, '4002', 'Beta');
  scopedA = await createKey(t.app, bearer(token), 'admin', a.id);
  otherA = await createKey(t.app, bearer(token), 'agent', a.id);
  keyB = await createKey(t.app, bearer(token), 'read', b.id);
  unscoped = await createKey(t.app, bearer(token), 'write');
});
afterAll(() => t.close());

const asA = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  t.app.inject({ method, url: `/api/v1${url}`, headers: apiKey(scopedA.key), ...(payload ? { payload } : {}) });

/** How a key appears in lists: everything but the key itself. */
const masked = (k: Key) => ({
  id: k.id,
  name: `${k.permissions} key`,
  key_hint: k.key_hint,
  permissions: k.permissions,
  customer_id: k.customer_id,
  created_at: expect.any(String),
  expires_at: null,
  max_uses: null,
  uses: 0,
  expired: false,
});
const keyIds = async () => (await t.db.db.selectFrom('api_keys').select('id').orderBy('id').execute()).map((r) => r.id);

describe('an admin key scoped to customer A', () => {
  it('lists only A in GET /customers and reads A', async () => {
    const list = await asA('GET', '/customers');
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json()).toEqual([a]);
    const one = await asA('GET', `/customers/${a.id}`);
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json()).toEqual(a);
  });

  it('gets 404 for B, the same answer as for a customer that does not exist', async () => {
    const other = expectError(await asA('GET', `/customers/${b.id}`), 404, 'NOT_FOUND');
    const missing = expectError(await asA('GET', '/customers/999999'), 404, 'NOT_FOUND');
    expect(other.error).toBe(missing.error);
    expectError(await asA('GET', `/customers/${b.id}/apikeys`), 404, 'NOT_FOUND');
  });

  it('cannot change or delete B (404) and B stays as it was', async () => {
    expectError(await asA('PUT', `/customers/${b.id}`, { name: 'Taken over' }), 404, 'NOT_FOUND');
    expectError(await asA('DELETE', `/customers/${b.id}`), 404, 'NOT_FOUND');
    const row = await t.db.db.selectFrom('customers').select(['number', 'name']).where('id', '=', b.id).executeTakeFirst();
    expect(row).toEqual({ number: '4002', name: 'Beta' });
  });

  it('lists only A’s keys, in GET /apikeys and in GET /customers/{A}/apikeys', async () => {
    const all = await asA('GET', '/apikeys');
    expect(all.statusCode, all.body).toBe(200);
    const listed = all.json() as Array<{ id: number; customer_id: number | null }>;
    expect(listed.every((k) => k.customer_id === a.id), all.body).toBe(true);
    expect(listed.map((k) => k.id)).toEqual(expect.arrayContaining([scopedA.id, otherA.id]));
    expect(listed.map((k) => k.id)).not.toContain(keyB.id);
    expect(listed.map((k) => k.id)).not.toContain(unscoped.id);
    expect(listed.find((k) => k.id === otherA.id)).toEqual(masked(otherA));

    const ofA = await asA('GET', `/customers/${a.id}/apikeys`);
    expect(ofA.statusCode, ofA.body).toBe(200);
    expect((ofA.json() as Array<{ id: number }>).map((k) => k.id).sort()).toEqual(listed.map((k) => k.id).sort());
  });

  it('cannot create an unscoped key (403) nor a key for B (404); creates one for A (201)', async () => {
    const before = await keyIds();
    expectError(await asA('POST', '/apikeys', { name: 'wide', permissions: 'read' }), 403, 'FORBIDDEN');
    expectError(await asA('POST', '/apikeys', { name: 'wide', permissions: 'read', customer_id: null }), 403, 'FORBIDDEN');
    expectError(await asA('POST', '/apikeys', { name: 'for B', permissions: 'read', customer_id: b.id }), 404, 'NOT_FOUND');
    expect(await keyIds()).toEqual(before);

    const created = await createKey(t.app, apiKey(scopedA.key), 'write', a.id);
    expect(created).toMatchObject({ permissions: 'write', customer_id: a.id });
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/customers', headers: apiKey(created.key) });
    expect(me.json()).toEqual([a]);
  });

  it('gets 404 deleting an unscoped key or B’s key, and both keep working', async () => {
    expectError(await asA('DELETE', `/apikeys/${unscoped.id}`), 404, 'NOT_FOUND');
    expectError(await asA('DELETE', `/apikeys/${keyB.id}`), 404, 'NOT_FOUND');
    for (const k of [unscoped, keyB]) {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/customers', headers: apiKey(k.key) });
      expect(res.statusCode, res.body).toBe(200);
    }
  });

  it('cannot create customers (403) and nothing is stored', async () => {
    expectError(await asA('POST', '/customers', { number: '4099', name: 'Sneaky' }), 403, 'FORBIDDEN');
    expect(await t.db.db.selectFrom('customers').select('id').where('number', '=', '4099').execute()).toEqual([]);
  });

  it('is refused the server-wide users and settings (403); the audit log shows it only entries about A', async () => {
    for (const url of ['/users', '/settings']) expectError(await asA('GET', url), 403, 'FORBIDDEN');
    const audit = await asA('GET', '/audit');
    expect(audit.statusCode, audit.body).toBe(200);
    expect((audit.json() as Array<{ target: string | null }>).filter((e) => e.target?.includes(b.name))).toEqual([]);
    expectError(await asA('PUT', '/settings', { backend_url: 'https://evil.example' }), 403, 'FORBIDDEN');
    const settings = await t.app.inject({ method: 'GET', url: '/api/v1/settings', headers: bearer(token) });
    expect(settings.json()).toMatchObject({ backend_url: null });
  });
});

describe('unscoped callers', () => {
  it('an admin JWT and an unscoped key see both A and B', async () => {
    for (const headers of [bearer(token), apiKey(unscoped.key)]) {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/customers', headers });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual(expect.arrayContaining([a, b]));
      const one = await t.app.inject({ method: 'GET', url: `/api/v1/customers/${b.id}`, headers });
      expect(one.json()).toEqual(b);
    }
  });
});
