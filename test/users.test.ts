// User management (contract §1): users are listed with public fields only; usernames are validated and
// unique regardless of case; passwords are 6 characters to 72 UTF-8 bytes and never truncated; a new
// password or a deletion ends the user's sessions; the last user cannot be deleted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, bearer, login, seedUser } from './helpers/identity.js';

let t: TestApp;
let admin: string;

beforeAll(async () => {
  t = await buildTestApp();
  admin = await adminToken(t);
});
afterAll(() => t.close());

const USER_FIELDS = ['created_at', 'customer_ids', 'id', 'last_login_at', 'role', 'totp_enabled', 'username'];

const createUser = (username: string, password: string) =>
  t.app.inject({ method: 'POST', url: '/api/v1/users', headers: bearer(admin), payload: { username, password } });
const attempt = (app: TestApp, username: string, password: string) =>
  app.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password } });
const me = (token: string) => t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(token) });

function expectError(res: { statusCode: number; json(): unknown; headers: Record<string, unknown> }, status: number, code: string) {
  expect(res.statusCode, JSON.stringify(res.json())).toBe(status);
  expect(res.json()).toMatchObject({ code, error: expect.any(String), request_id: res.headers['x-request-id'] });
  return res.json() as { details?: Array<{ path: string; message: string }> };
}

describe('listing users', () => {
  it('shows id, username, totp_enabled, created_at, last_login_at, role and customer_ids, nothing else', async () => {
    await seedUser(t, 'lister', 'lister-password-1');
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/users', headers: bearer(admin) });
    expect(res.statusCode).toBe(200);
    const users = res.json() as Array<Record<string, unknown>>;
    expect(users.map((u) => u.username)).toEqual(expect.arrayContaining(['admin', 'lister']));
    for (const user of users) expect(Object.keys(user).sort()).toEqual(USER_FIELDS);
    expect(users.find((u) => u.username === 'admin')).toMatchObject({ totp_enabled: false, last_login_at: expect.stringMatching(/Z$/) });
    expect(users.find((u) => u.username === 'lister')).toMatchObject({ last_login_at: null });
    expect(res.body).not.toMatch(/\$2[aby]\$/);
  });
});

describe('creating users', () => {
  it('answers 201 with the new user, who can sign in', async () => {
    const res = await createUser('erin@example.com', 'erin-password-1');
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({
      id: expect.any(Number),
      username: 'erin@example.com',
      totp_enabled: false,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      last_login_at: null,
      role: 'admin',
      customer_ids: null,
    });
    expect(await login(t.app, 'erin@example.com', 'erin-password-1')).toBeTypeOf('string');
  });

  it('refuses a taken username, also when it differs only in case', async () => {
    expect((await createUser('kim', 'kim-password-1')).statusCode).toBe(201);
    expectError(await createUser('kim', 'other-password-1'), 409, 'CONFLICT');
    expectError(await createUser('KiM', 'other-password-1'), 409, 'CONFLICT');
  });

  it('refuses invalid usernames with 400 VALIDATION_ERROR naming the field', async () => {
    for (const username of ['has space', 'x'.repeat(65), '', 'semi;colon']) {
      const body = expectError(await createUser(username, 'valid-password-1'), 400, 'VALIDATION_ERROR');
      expect(body.details?.map((d) => d.path)).toEqual(['username']);
    }
    expect((await createUser('y'.repeat(64), 'valid-password-1')).statusCode).toBe(201);
  });

  it('accepts passwords of 6 characters up to exactly 72 UTF-8 bytes', async () => {
    const short = expectError(await createUser('pw-short', '12345'), 400, 'VALIDATION_ERROR');
    expect(short.details?.map((d) => d.path)).toEqual(['password']);
    expect((await createUser('pw-six', '123456')).statusCode).toBe(201);
    expect((await createUser('pw-72', 'ä'.repeat(36))).statusCode).toBe(201);
    const long = expectError(await createUser('pw-73', 'ä'.repeat(36) + 'x'), 400, 'VALIDATION_ERROR');
    expect(long.details?.map((d) => d.path)).toEqual(['password']);
    const users = (await t.app.inject({ method: 'GET', url: '/api/v1/users', headers: bearer(admin) })).json() as Array<{ username: string }>;
    expect(users.map((u) => u.username)).not.toContain('pw-73');
  });

  it('never truncates: a longer password sharing the first 72 bytes does not sign in', async () => {
    const password = 'ä'.repeat(36);
    expect((await createUser('pw-exact', password)).statusCode).toBe(201);
    expectError(await attempt(t, 'pw-exact', password + 'x'), 401, 'INVALID_CREDENTIALS');
    expect((await attempt(t, 'pw-exact', password)).statusCode).toBe(200);
  });
});

describe('changing a password', () => {
  it("answers ok, ends the user's sessions and swaps the passwords", async () => {
    const id = await seedUser(t, 'frank', 'frank-old-pass');
    const tokens = [await login(t.app, 'frank', 'frank-old-pass'), await login(t.app, 'frank', 'frank-old-pass')];
    const res = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/users/${id}/password`,
      headers: bearer(admin),
      payload: { password: 'frank-new-pass' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ok: true });

    for (const token of tokens) expect((await me(token)).statusCode).toBe(401);
    expect((await me(admin)).statusCode).toBe(200);
    expectError(await attempt(t, 'frank', 'frank-old-pass'), 401, 'INVALID_CREDENTIALS');
    expect((await me(await login(t.app, 'frank', 'frank-new-pass'))).json()).toMatchObject({ username: 'frank' });
  });

  it('answers 404 for an unknown user', async () => {
    const res = await t.app.inject({
      method: 'PUT',
      url: '/api/v1/users/999999/password',
      headers: bearer(admin),
      payload: { password: 'whatever-pass' },
    });
    expectError(res, 404, 'NOT_FOUND');
  });
});

describe('deleting users', () => {
  it("answers ok, ends the user's sessions and drops them from the list", async () => {
    const id = await seedUser(t, 'gina', 'gina-password-1');
    const token = await login(t.app, 'gina', 'gina-password-1');
    const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/users/${id}`, headers: bearer(admin) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ok: true });

    expect((await me(token)).statusCode).toBe(401);
    const users = (await t.app.inject({ method: 'GET', url: '/api/v1/users', headers: bearer(admin) })).json() as Array<{ id: number }>;
    expect(users.map((u) => u.id)).not.toContain(id);
    expectError(await attempt(t, 'gina', 'gina-password-1'), 401, 'INVALID_CREDENTIALS');
  });

  it('answers 404 for an unknown user', async () => {
    expectError(await t.app.inject({ method: 'DELETE', url: '/api/v1/users/999999', headers: bearer(admin) }), 404, 'NOT_FOUND');
  });

  it('refuses to delete the last remaining user', async () => {
    // Its own database, so "last" means two users, then one.
    const own = await buildTestApp();
    try {
      const ownerId = await seedUser(own, 'owner', 'owner-password-1');
      const otherId = await seedUser(own, 'other', 'other-password-1');
      const token = await login(own.app, 'owner', 'owner-password-1');
      const del = (id: number) => own.app.inject({ method: 'DELETE', url: `/api/v1/users/${id}`, headers: bearer(token) });

      expect((await del(otherId)).statusCode).toBe(200);
      expectError(await del(ownerId), 409, 'CONFLICT');
      const left = await own.db.db.selectFrom('users').select('username').execute();
      expect(left).toEqual([{ username: 'owner' }]);
      expect((await attempt(own, 'owner', 'owner-password-1')).statusCode).toBe(200);
    } finally {
      await own.close();
    }
  });
});
