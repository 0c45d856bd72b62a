// The audit log names the object of each change (issue 33): "agent demo-3 (Bäckerei …)" instead of
// `POST /api/v1/agents` alone; a deleted object is named as it was; a hostile id is stored harmlessly;
// nothing secret reaches the entry; and a login whose client hung up early still has its address.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, bearer, createCustomer, createKey, seedUser } from './helpers/identity.js';

interface AuditEntry {
  id: number;
  actor: string;
  action: string;
  path: string;
  status_code: number;
  ip: string;
  target: string | null;
}

let t: TestApp;
let admin: string;
let customer: { id: number; number: string; name: string };

beforeAll(async () => {
  t = await buildTestApp();
  admin = await adminToken(t);
  customer = await createCustomer(t.app, admin, '10001', 'Bäckerei Sonnenschein GmbH');
});
afterAll(() => t.close());

async function newest(): Promise<AuditEntry> {
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/audit?limit=1', headers: bearer(admin) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json()[0];
}

const send = (method: 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  t.app.inject({ method, url: `/api/v1${url}`, headers: bearer(admin), ...(payload ? { payload } : {}) });

describe('the object of a change', () => {
  it('names a created customer by number and name', async () => {
    const res = await send('POST', '/customers', { number: '10002', name: 'Metzgerei Huber' });
    expect(res.statusCode).toBe(201);
    expect(await newest()).toMatchObject({ action: 'customer.create', path: '/api/v1/customers', target: 'customer 10002 Metzgerei Huber' });
  });

  it('names a pre-registered agent with its customer, and the agent again when it is deleted', async () => {
    const res = await send('POST', '/agents', { name: 'demo-3', customer_id: customer.id });
    expect(res.statusCode, res.body).toBe(201);
    expect(await newest()).toMatchObject({ action: 'agent.pre_register', target: 'agent demo-3 (Bäckerei Sonnenschein GmbH)' });
    const id = res.json().id as string;
    expect((await send('DELETE', `/agents/${id}`)).statusCode).toBe(200);
    // Named before the deletion: afterwards there is nothing left to look up.
    expect(await newest()).toMatchObject({ action: 'agent.delete', target: 'agent demo-3 (Bäckerei Sonnenschein GmbH)' });
  });

  it('names a saved script (also when it runs) and a bulk action', async () => {
    const script = await send('POST', '/scripts', { name: 'Disk report', shell: 'sh', body: 'df -h', platforms: ['linux'] });
    expect(script.statusCode, script.body).toBe(201);
    expect(await newest()).toMatchObject({ action: 'script.create', target: 'script Disk report' });
    const agent = await send('POST', '/agents', { name: 'audit-bulk' });
    const bulk = await send('POST', '/bulk-actions', { action: 'request_update', target: { agent_ids: [agent.json().id] } });
    expect(bulk.statusCode, bulk.body).toBe(201);
    expect(await newest()).toMatchObject({ action: 'bulk.create', target: `bulk action #${bulk.json().id} (request_update)` });
    expect((await send('POST', `/scripts/${script.json().id}/run`, { agent_id: agent.json().id })).statusCode).toBe(409);
    expect(await newest()).toMatchObject({ action: 'script.run', target: 'script Disk report', status_code: 409 });
  });

  it('names a user created, and the user signing in', async () => {
    const res = await send('POST', '/users', { username: 'anna', password: 'anna-password-1' });
    expect(res.statusCode, res.body).toBe(201);
    expect(await newest()).toMatchObject({ action: 'user.create', target: 'user anna' });
    const login = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'anna', password: 'wrong-password' } });
    expect(login.statusCode).toBe(401);
    expect(await newest()).toMatchObject({ action: 'auth.login_failed', actor: 'anna', target: 'user anna' });
  });

  it('names a customer changed by its id in the path', async () => {
    const res = await send('PUT', `/customers/${customer.id}`, { number: '10001', name: 'Bäckerei Sonnenschein GmbH' });
    expect(res.statusCode, res.body).toBe(200);
    expect(await newest()).toMatchObject({ action: 'customer.update', target: 'customer 10001 Bäckerei Sonnenschein GmbH' });
  });

  it('names an API key by name and hint, never by the key itself', async () => {
    const key = await createKey(t.app, bearer(admin), 'read');
    const entry = await newest();
    expect(entry).toMatchObject({ action: 'apikey.create', target: `API key read key (${key.key_hint})` });
    expect(JSON.stringify(entry)).not.toContain(key.key);
  });

  it('names an unknown object by kind and id, and leaves fleet-wide actions without one', async () => {
    expect((await send('DELETE', '/customers/999999')).statusCode).toBe(404);
    expect(await newest()).toMatchObject({ action: 'customer.delete', status_code: 404, target: 'customer 999999' });
    expect((await send('POST', '/agents/request-update-all', {})).statusCode).toBeLessThan(500);
    expect(await newest()).toMatchObject({ action: 'agent.update_request_all', target: null });
  });

  it('refuses a hostile id with 400 and the contract body, writing no entry naming it', async () => {
    const before = await newest();
    const res = await send('DELETE', `/agents/%01${'a'.repeat(300)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', error: expect.any(String), request_id: expect.any(String) });
    expect((await newest()).id).toBe(before.id);
  });
});

describe('the address of a sign-in', () => {
  it('is recorded even when the client hangs up before the answer (was empty)', async () => {
    await seedUser(t, 'bernd', 'bernd-password-1');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as { port: number };
    const body = JSON.stringify({ username: 'bernd', password: 'bernd-password-1' });
    // The request is sent whole, then the connection is cut while the password is being checked.
    await new Promise<void>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`POST /api/v1/auth/login HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, () => {
          socket.destroy();
          resolve();
        });
      });
      socket.on('error', reject);
    });
    let entry: AuditEntry | undefined;
    for (let i = 0; i < 100 && entry?.actor !== 'bernd'; i++) {
      await new Promise((r) => setTimeout(r, 20));
      entry = await newest();
    }
    expect(entry).toMatchObject({ action: 'auth.login', actor: 'bernd', ip: '127.0.0.1' });
  });
});
