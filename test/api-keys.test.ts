// API keys (contract §1): the key is shown once and stored only as its SHA-256, it works until it is
// deleted, bad input is refused, and a key cannot delete a key that out-ranks it.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { expectError } from './helpers/assertions.js';

let t: TestApp;
let token: string;
let auth: Record<string, string>;
beforeAll(async () => {
  t = await buildTestApp();
  token = await adminToken(t);
  auth = bearer(token);
});
afterAll(() => t.close());


const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown, headers = auth) =>
  t.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe('POST /apikeys', () => {
  it('answers 201 with the key, its hint and its attributes', async () => {
    const customer = await createCustomer(t.app, token, '5001');
    const res = await call('POST', '/apikeys', { name: 'Site agents', permissions: 'agent', customer_id: customer.id });
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json() as Record<string, unknown> & { key: string };
    expect(created).toEqual({
      id: expect.any(Number),
      name: 'Site agents',
      key: expect.stringMatching(/^rmm_[0-9A-Za-z]{32,}$/),
      key_hint: `${created.key.slice(0, 8)}…${created.key.slice(-4)}`,
      permissions: 'agent',
      customer_id: customer.id,
      created_at: expect.stringMatching(ISO),
      expires_at: null,
      max_uses: null,
      uses: 0,
      expired: false,
    });
  });

  it('creates an unscoped key with customer_id null', async () => {
    const res = await call('POST', '/apikeys', { name: 'Monitoring', permissions: 'read' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ permissions: 'read', customer_id: null });
  });

  it('never hands out the same key twice', async () => {
    const a = await createKey(t.app, auth, 'read');
    const b = await createKey(t.app, auth, 'read');
    expect(a.key).not.toBe(b.key);
  });

  it('refuses an unknown permission with 400', async () => {
    const body = expectError(await call('POST', '/apikeys', { name: 'Root', permissions: 'root' }), 400, 'VALIDATION_ERROR');
    expect(body.details).toEqual([expect.objectContaining({ path: 'permissions' })]);
    expect(await t.db.db.selectFrom('api_keys').select('id').where('name', '=', 'Root').execute()).toEqual([]);
  });

  it('refuses an unknown customer with 404', async () => {
    expectError(await call('POST', '/apikeys', { name: 'Nobody', permissions: 'read', customer_id: 999999 }), 404, 'NOT_FOUND');
    expect(await t.db.db.selectFrom('api_keys').select('id').where('name', '=', 'Nobody').execute()).toEqual([]);
  });
});

describe('the key is shown once and stored as SHA-256', () => {
  it('lists the same object without the key, in GET /apikeys and GET /customers/{id}/apikeys', async () => {
    const customer = await createCustomer(t.app, token, '5101');
    const res = await call('POST', '/apikeys', { name: 'Scoped write', permissions: 'write', customer_id: customer.id });
    const { key, ...withoutKey } = res.json() as Record<string, unknown> & { key: string };

    const all = await call('GET', '/apikeys');
    expect(all.statusCode).toBe(200);
    expect(all.json()).toContainEqual(withoutKey);
    expect(all.body).not.toContain(key);
    for (const listed of all.json() as Array<Record<string, unknown>>) expect(listed).not.toHaveProperty('key');

    const ofCustomer = await call('GET', `/customers/${customer.id}/apikeys`);
    expect(ofCustomer.statusCode).toBe(200);
    expect(ofCustomer.json()).toEqual([withoutKey]);
    expect(ofCustomer.body).not.toContain(key);
  });

  it('stores sha256-hex of the key and never the key text', async () => {
    const created = await createKey(t.app, auth, 'admin');
    const row = await t.db.db.selectFrom('api_keys').select('key_hash').where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(row.key_hash).toBe(sha256(created.key));
    const rows = await t.db.db.selectFrom('api_keys').selectAll().execute();
    expect(rows.length).toBeGreaterThan(1);
    const secretPart = created.key.slice(8, -4);
    for (const r of rows) {
      for (const value of Object.values(r)) {
        const text = value instanceof Date ? value.toISOString() : String(value);
        expect(text).not.toContain(created.key);
        expect(text).not.toContain(secretPart);
      }
    }
  });
});

describe('using and deleting a key', () => {
  it('works until DELETE /apikeys/{id}, then answers 401', async () => {
    const created = await createKey(t.app, auth, 'read');
    expect((await call('GET', '/customers', undefined, apiKey(created.key))).statusCode).toBe(200);
    const res = await call('DELETE', `/apikeys/${created.id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expectError(await call('GET', '/customers', undefined, apiKey(created.key)), 401, 'UNAUTHORIZED');
    expect((await call('GET', '/apikeys')).json()).not.toContainEqual(expect.objectContaining({ id: created.id }));
  });

  it('answers 404 for deleting an unknown id', async () => {
    expectError(await call('DELETE', '/apikeys/999999'), 404, 'NOT_FOUND');
  });

  it('lets a write key not delete an admin key (403), but an admin key can', async () => {
    const adminKey = await createKey(t.app, auth, 'admin');
    const writeKey = await createKey(t.app, auth, 'write');
    const target = await createKey(t.app, auth, 'admin');

    expectError(await call('DELETE', `/apikeys/${target.id}`, undefined, apiKey(writeKey.key)), 403, 'FORBIDDEN');
    expect((await call('GET', '/customers', undefined, apiKey(target.key))).statusCode).toBe(200);

    const res = await call('DELETE', `/apikeys/${target.id}`, undefined, apiKey(adminKey.key));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expectError(await call('GET', '/customers', undefined, apiKey(target.key)), 401, 'UNAUTHORIZED');
  });
});
