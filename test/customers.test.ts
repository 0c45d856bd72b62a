// Customers (contract §3, spec "Customers and key scope"): create, read, change and delete them as an
// operator sees it; numbers are unique strings, no key appears by itself, and deleting a customer takes
// its scoped keys with it.
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


const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, headers = auth) =>
  t.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe('POST /customers', () => {
  it('creates a customer and answers 201 with it', async () => {
    const res = await call('POST', '/customers', { number: '1001', name: 'Müller GmbH' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({ id: expect.any(Number), number: '1001', name: 'Müller GmbH', created_at: expect.stringMatching(ISO) });
  });

  it('stores a JSON number as its decimal string', async () => {
    const res = await call('POST', '/customers', { number: 1002, name: 'Numeric' });
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json() as { id: number; number: unknown };
    expect(created.number).toBe('1002');
    const row = await t.db.db.selectFrom('customers').select('number').where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(row.number).toBe('1002');
    expect((await call('GET', `/customers/${created.id}`)).json()).toMatchObject({ number: '1002' });
  });

  it('refuses a duplicate number with 409 CONFLICT, also when the duplicate is sent as a number', async () => {
    await createCustomer(t.app, token, '1003');
    expectError(await call('POST', '/customers', { number: '1003', name: 'Again' }), 409, 'CONFLICT');
    expectError(await call('POST', '/customers', { number: 1003, name: 'Again' }), 409, 'CONFLICT');
    const rows = await t.db.db.selectFrom('customers').select('id').where('number', '=', '1003').execute();
    expect(rows).toHaveLength(1);
  });

  it.each([
    ['missing', { number: '1004' }],
    ['empty', { number: '1004', name: '' }],
  ])('refuses a %s name with 400 and details naming it', async (_label, payload) => {
    const body = expectError(await call('POST', '/customers', payload), 400, 'VALIDATION_ERROR');
    expect(body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'name', message: expect.any(String) })]));
    expect(await t.db.db.selectFrom('customers').select('id').where('number', '=', '1004').execute()).toEqual([]);
  });

  it('creates no API key with the customer', async () => {
    const keysBefore = (await call('GET', '/apikeys')).json();
    const created = await createCustomer(t.app, token, '1005');
    const ofCustomer = await call('GET', `/customers/${created.id}/apikeys`);
    expect(ofCustomer.statusCode).toBe(200);
    expect(ofCustomer.json()).toEqual([]);
    expect((await call('GET', '/apikeys')).json()).toEqual(keysBefore);
    expect(await t.db.db.selectFrom('api_keys').select('id').where('customer_id', '=', created.id).execute()).toEqual([]);
  });
});

describe('GET /customers and /customers/{id}', () => {
  it('lists every customer and returns one by id', async () => {
    const a = await createCustomer(t.app, token, '2001', 'Alpha');
    const b = await createCustomer(t.app, token, '2002', 'Beta');
    const list = await call('GET', '/customers');
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual(expect.arrayContaining([a, b]));
    const rows = await t.db.db.selectFrom('customers').select('id').execute();
    expect((list.json() as unknown[]).length).toBe(rows.length);
    const one = await call('GET', `/customers/${b.id}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(b);
  });

  it('answers an unknown id with 404 NOT_FOUND', async () => {
    expectError(await call('GET', '/customers/999999'), 404, 'NOT_FOUND');
  });

  it('answers a non-numeric id with 400', async () => {
    const body = expectError(await call('GET', '/customers/abc'), 400, 'VALIDATION_ERROR');
    expect(body.details).toEqual([expect.objectContaining({ path: 'id' })]);
  });
});

describe('PUT /customers/{id}', () => {
  it('changes the name, the number, or both, and keeps the rest', async () => {
    const c = await createCustomer(t.app, token, '3001', 'Old name');
    const renamed = await call('PUT', `/customers/${c.id}`, { name: 'New name' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toEqual({ ...c, name: 'New name' });
    const renumbered = await call('PUT', `/customers/${c.id}`, { number: 3002 });
    expect(renumbered.json()).toEqual({ ...c, name: 'New name', number: '3002' });
    const both = await call('PUT', `/customers/${c.id}`, { number: '3003', name: 'Both' });
    expect(both.json()).toEqual({ ...c, number: '3003', name: 'Both' });
    expect((await call('GET', `/customers/${c.id}`)).json()).toEqual({ ...c, number: '3003', name: 'Both' });
  });

  it("refuses another customer's number with 409 and changes nothing", async () => {
    const a = await createCustomer(t.app, token, '3101');
    const b = await createCustomer(t.app, token, '3102');
    expectError(await call('PUT', `/customers/${b.id}`, { number: '3101', name: 'Taken' }), 409, 'CONFLICT');
    expect((await call('GET', `/customers/${b.id}`)).json()).toEqual(b);
    expect((await call('GET', `/customers/${a.id}`)).json()).toEqual(a);
  });

  it('refuses an empty body with 400', async () => {
    const c = await createCustomer(t.app, token, '3201');
    expectError(await call('PUT', `/customers/${c.id}`, {}), 400, 'VALIDATION_ERROR');
    expect((await call('GET', `/customers/${c.id}`)).json()).toEqual(c);
  });

  it('answers an unknown id with 404', async () => {
    expectError(await call('PUT', '/customers/999999', { name: 'Ghost' }), 404, 'NOT_FOUND');
  });
});

describe('DELETE /customers/{id}', () => {
  it('deletes the customer and its scoped keys, leaving other keys working', async () => {
    const c = await createCustomer(t.app, token, '4001');
    const other = await createCustomer(t.app, token, '4002');
    const scoped = await createKey(t.app, auth, 'read', c.id);
    const otherScoped = await createKey(t.app, auth, 'read', other.id);
    expect((await call('GET', `/customers/${c.id}`, undefined, apiKey(scoped.key))).statusCode).toBe(200);

    const res = await call('DELETE', `/customers/${c.id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ok: true });

    expectError(await call('GET', '/customers', undefined, apiKey(scoped.key)), 401, 'UNAUTHORIZED');
    expect(await t.db.db.selectFrom('api_keys').select('id').where('id', '=', scoped.id).execute()).toEqual([]);
    expect((await call('GET', '/apikeys')).json()).not.toEqual(expect.arrayContaining([expect.objectContaining({ id: scoped.id })]));
    expectError(await call('GET', `/customers/${c.id}`), 404, 'NOT_FOUND');
    expect((await call('GET', `/customers/${other.id}`, undefined, apiKey(otherScoped.key))).statusCode).toBe(200);
  });

  it('answers an unknown id with 404', async () => {
    expectError(await call('DELETE', '/customers/999999'), 404, 'NOT_FOUND');
  });
});
