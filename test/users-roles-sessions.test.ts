// Users' roles, customers and sessions (issue 35, Builds 1 and 4), through the API as an admin and the
// users themselves would use it: who exists before roles keeps everything, a role or scope change and a
// deletion end the user's sessions at once, each device's session can be listed and ended, and the last
// admin with every customer cannot be demoted or deleted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, bearer, createCustomer, login } from './helpers/identity.js';

let t: TestApp;
let admin: string;
let customerA: { id: number };

beforeAll(async () => {
  t = await buildTestApp();
  admin = await adminToken(t);
  customerA = await createCustomer(t.app, admin, '9301', 'Alpha');
});
afterAll(() => t.close());

const call = (method: string, url: string, token: string, payload?: object, headers: Record<string, string> = {}) =>
  t.app.inject({ method: method as 'GET', url: `/api/v1${url}`, headers: { ...bearer(token), ...headers }, ...(payload ? { payload } : {}) });

async function newUser(username: string, extra: object = {}): Promise<{ id: number; role: string; customer_ids: number[] | null }> {
  const res = await call('POST', '/users', admin, { username, password: 'secret-pass-1', ...extra });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

describe('roles and customers', () => {
  it('makes a user admin with every customer unless told otherwise, as every user was before roles', async () => {
    expect(await newUser('default-user')).toMatchObject({ role: 'admin', customer_ids: null });
    const me = await call('GET', '/auth/me', admin);
    expect(me.json()).toMatchObject({ username: 'admin', role: 'admin', customer_ids: null });
  });

  it('creates a technician limited to a customer, and refuses a customer that does not exist (400, nothing created)', async () => {
    expect(await newUser('tech-a', { role: 'write', customer_ids: [customerA.id] })).toMatchObject({ role: 'write', customer_ids: [customerA.id] });
    const bad = await call('POST', '/users', admin, { username: 'tech-ghost', password: 'secret-pass-1', customer_ids: [customerA.id, 999999] });
    expectError(bad, 400, 'VALIDATION_ERROR');
    expect(bad.json().details).toEqual([{ path: 'customer_ids.1', message: 'customer 999999 does not exist' }]);
    const users = (await call('GET', '/users', admin)).json() as Array<{ username: string }>;
    expect(users.map((u) => u.username)).not.toContain('tech-ghost');
  });

  it('lets only an admin with every customer manage users: a scoped admin and a write user get 403', async () => {
    await newUser('scoped-admin', { role: 'admin', customer_ids: [customerA.id] });
    await newUser('plain-writer', { role: 'write' });
    for (const name of ['scoped-admin', 'plain-writer']) {
      const token = await login(t.app, name, 'secret-pass-1');
      expectError(await call('POST', '/users', token, { username: `minted-by-${name}`, password: 'secret-pass-1' }), 403, 'FORBIDDEN');
      expectError(await call('PATCH', `/users/1`, token, { role: 'read' }), 403, 'FORBIDDEN');
    }
  });

  it('ends the sessions of a user whose role changes, at once', async () => {
    const user = await newUser('demoted', { role: 'write' });
    const token = await login(t.app, 'demoted', 'secret-pass-1');
    expect((await call('POST', '/customers', token, { number: '9399', name: 'Before' })).statusCode).toBe(201);
    const changed = await call('PATCH', `/users/${user.id}`, admin, { role: 'read' });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({ role: 'read', customer_ids: null });
    expectError(await call('GET', '/auth/me', token), 401, 'UNAUTHORIZED');
    const again = await login(t.app, 'demoted', 'secret-pass-1');
    expectError(await call('POST', '/customers', again, { number: '9398', name: 'After' }), 403, 'FORBIDDEN');
    expect((await call('GET', '/customers', again)).statusCode).toBe(200);
  });

  it('refuses to demote or delete the last admin with every customer (409), and allows it once there is another', async () => {
    const others = ((await call('GET', '/users', admin)).json() as Array<{ id: number; username: string; role: string; customer_ids: number[] | null }>)
      .filter((u) => u.username !== 'admin' && u.role === 'admin' && u.customer_ids === null);
    for (const other of others) expect((await call('PATCH', `/users/${other.id}`, admin, { role: 'write' })).statusCode).toBe(200);
    const self = (await call('GET', '/auth/me', admin)).json() as { id: number };
    expectError(await call('PATCH', `/users/${self.id}`, admin, { role: 'write' }), 409, 'CONFLICT');
    expectError(await call('PATCH', `/users/${self.id}`, admin, { customer_ids: [customerA.id] }), 409, 'CONFLICT');
    expectError(await call('DELETE', `/users/${self.id}`, admin), 409, 'CONFLICT');
    expect((await call('GET', '/auth/me', admin)).json()).toMatchObject({ role: 'admin', customer_ids: null });
    const second = await newUser('second-admin');
    const secondToken = await login(t.app, 'second-admin', 'secret-pass-1');
    expect((await call('PATCH', `/users/${self.id}`, secondToken, { role: 'write' })).statusCode).toBe(200);
    expect((await call('PATCH', `/users/${self.id}`, secondToken, { role: 'admin' })).statusCode).toBe(200);
    admin = await login(t.app, 'admin', 'admin-password-1');
    expect((await call('DELETE', `/users/${second.id}`, admin)).statusCode).toBe(200);
    expectError(await call('GET', '/auth/me', secondToken), 401, 'UNAUTHORIZED');
  });
});

describe('sessions', () => {
  it('lists each sign-in with device, address and last use, and marks the current one', async () => {
    await newUser('roaming', { role: 'read' });
    const laptop = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { 'user-agent': 'Laptop Firefox' }, payload: { username: 'roaming', password: 'secret-pass-1' } });
    const phone = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { 'user-agent': 'Phone Safari' }, payload: { username: 'roaming', password: 'secret-pass-1' } });
    const laptopToken = laptop.json().token as string;
    const phoneToken = phone.json().token as string;
    const list = await call('GET', '/auth/sessions', laptopToken);
    expect(list.statusCode, list.body).toBe(200);
    const sessions = list.json() as Array<{ id: string; user_agent: string; ip: string; method: string; current: boolean; last_used_at: string }>;
    expect(sessions.map((s) => [s.user_agent, s.current, s.method, s.ip]).sort()).toEqual([
      ['Laptop Firefox', true, 'password', '127.0.0.1'],
      ['Phone Safari', false, 'password', '127.0.0.1'],
    ]);
    // A read user still manages their own sessions: ending the phone's leaves the laptop signed in.
    const phoneSession = sessions.find((s) => s.user_agent === 'Phone Safari')!;
    expect((await call('DELETE', `/auth/sessions/${phoneSession.id}`, laptopToken)).statusCode).toBe(200);
    expectError(await call('GET', '/auth/me', phoneToken), 401, 'UNAUTHORIZED');
    expect((await call('GET', '/auth/me', laptopToken)).statusCode).toBe(200);
    expectError(await call('DELETE', `/auth/sessions/${phoneSession.id}`, laptopToken), 404, 'NOT_FOUND');
  });

  it("cannot see or end another user's session through its own list", async () => {
    await newUser('victim', { role: 'read' });
    const victimToken = await login(t.app, 'victim', 'secret-pass-1');
    const victimSession = ((await call('GET', '/auth/sessions', victimToken)).json() as Array<{ id: string }>)[0]!;
    await newUser('intruder', { role: 'write' });
    const intruder = await login(t.app, 'intruder', 'secret-pass-1');
    expect(((await call('GET', '/auth/sessions', intruder)).json() as Array<{ id: string }>).map((s) => s.id)).not.toContain(victimSession.id);
    expectError(await call('DELETE', `/auth/sessions/${victimSession.id}`, intruder), 404, 'NOT_FOUND');
    expectError(await call('GET', `/users/1/sessions`, intruder), 403, 'FORBIDDEN');
    expect((await call('GET', '/auth/me', victimToken)).statusCode).toBe(200);
  });

  it('signs out everywhere, and lets an admin end all sessions of another user', async () => {
    const user = await newUser('many-devices', { role: 'write' });
    const one = await login(t.app, 'many-devices', 'secret-pass-1');
    const two = await login(t.app, 'many-devices', 'secret-pass-1');
    const listed = await call('GET', `/users/${user.id}/sessions`, admin);
    expect((listed.json() as unknown[]).length).toBe(2);
    expect((await call('DELETE', `/users/${user.id}/sessions`, admin)).statusCode).toBe(200);
    for (const token of [one, two]) expectError(await call('GET', '/auth/me', token), 401, 'UNAUTHORIZED');
    expect((await call('GET', `/users/${user.id}/sessions`, admin)).json()).toEqual([]);

    const three = await login(t.app, 'many-devices', 'secret-pass-1');
    const four = await login(t.app, 'many-devices', 'secret-pass-1');
    expect((await call('POST', '/auth/logout', three, {})).statusCode).toBe(200);
    for (const token of [three, four]) expectError(await call('GET', '/auth/me', token), 401, 'UNAUTHORIZED');
  });

  it('ends the sessions of a deleted user at once', async () => {
    const user = await newUser('leaver', { role: 'write' });
    const token = await login(t.app, 'leaver', 'secret-pass-1');
    expect((await call('DELETE', `/users/${user.id}`, admin)).statusCode).toBe(200);
    expectError(await call('GET', '/auth/me', token), 401, 'UNAUTHORIZED');
  });
});
