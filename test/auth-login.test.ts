// Password sign-in (contract §1): wrong username and wrong password look the same, failures are
// throttled (here from one address; the rules in full: auth-login-throttle.test.ts), usernames match
// regardless of case, the success body carries only public user fields, and logout ends the user's
// sessions. Time is a FakeClock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { bearer, login, seedUser } from './helpers/identity.js';

const clock = new FakeClock('2026-03-10T09:00:00Z');
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ clock });
});
afterAll(() => t.close());

const attempt = (username: string, password: string) =>
  t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password } });
const me = (token: string) => t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(token) });

describe('wrong credentials', () => {
  it('answers an unknown user and a wrong password with the same 401 body', async () => {
    await seedUser(t, 'erik', 'erik-password-1');
    const unknown = await attempt('nobody-here', 'erik-password-1');
    const wrong = await attempt('erik', 'not-his-password');
    for (const res of [unknown, wrong]) {
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ code: 'INVALID_CREDENTIALS', request_id: res.headers['x-request-id'] });
    }
    const withoutId = (body: Record<string, unknown>) => ({ ...body, request_id: undefined });
    expect(withoutId(unknown.json())).toEqual(withoutId(wrong.json()));
    expect(unknown.headers['x-request-id']).not.toBe(wrong.headers['x-request-id']);
  });
});

describe('throttling', () => {
  const password = 'bob-password-1';

  it('answers 429 with Retry-After after 10 failures from one address, even for the right password', async () => {
    await seedUser(t, 'bob', password);
    for (let i = 0; i < 10; i++) expect((await attempt('bob', `wrong-${i}`)).statusCode).toBe(401);

    const blocked = await attempt('bob', password);
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toMatchObject({ code: 'TOO_MANY_ATTEMPTS', request_id: blocked.headers['x-request-id'] });
    const retryAfter = Number(blocked.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    // Issue 57: a first wait of a minute that grows with further failures, not a 15-minute lock.
    expect(retryAfter).toBe(60);
    // The same account under another spelling is the same username.
    expect((await attempt('BOB', password)).statusCode).toBe(429);
  });

  it('leaves other usernames alone', async () => {
    await seedUser(t, 'carol', 'carol-password-1');
    expect((await attempt('carol', 'carol-password-1')).statusCode).toBe(200);
  });

  it('lets the right password in again once the wait has passed', async () => {
    await clock.advance(59_000);
    expect((await attempt('bob', password)).statusCode).toBe(429);
    await clock.advance(1_000);
    expect((await attempt('bob', password)).statusCode).toBe(200);
  });
});

describe('successful login', () => {
  it('matches usernames regardless of case', async () => {
    await seedUser(t, 'Dave.Smith', 'dave-password-1');
    for (const spelling of ['dave.smith', 'DAVE.SMITH', 'Dave.Smith']) {
      const res = await attempt(spelling, 'dave-password-1');
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ user: { username: 'Dave.Smith' } });
    }
  });

  it('returns the token, its 8-hour expiry and the public user fields only', async () => {
    const id = await seedUser(t, 'frida', 'frida-password-1');
    const res = await attempt('frida', 'frida-password-1');
    expect(res.statusCode, res.body).toBe(200);
    const now = clock.now().getTime();
    expect(res.json()).toEqual({
      token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      token_type: 'Bearer',
      expires_at: new Date(now + 8 * 3600_000).toISOString(),
      user: {
        id,
        username: 'frida',
        totp_enabled: false,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
        last_login_at: new Date(now).toISOString(),
        role: 'admin',
        customer_ids: null,
      },
    });
    expect(res.json().expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

    const stored = await t.db.db.selectFrom('users').select('last_login_at').where('id', '=', id).executeTakeFirstOrThrow();
    expect(stored.last_login_at?.toISOString()).toBe(new Date(now).toISOString());
  });

  it('issues a token that works until its 8 hours are up', async () => {
    await seedUser(t, 'gus', 'gus-password-1');
    const token = await login(t.app, 'gus', 'gus-password-1');
    await clock.advance(8 * 3600_000 - 1000);
    expect((await me(token)).statusCode).toBe(200);
    await clock.advance(2000);
    expect((await me(token)).statusCode).toBe(401);
  });
});

describe('logout', () => {
  it("ends the user's sessions and no one else's; a new login works", async () => {
    await seedUser(t, 'hanna', 'hanna-password-1');
    await seedUser(t, 'ivan', 'ivan-password-1');
    const older = await login(t.app, 'hanna', 'hanna-password-1');
    const token = await login(t.app, 'hanna', 'hanna-password-1');
    const someoneElse = await login(t.app, 'ivan', 'ivan-password-1');

    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(token), payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ok: true });

    expect((await me(token)).statusCode).toBe(401);
    expect((await me(older)).statusCode).toBe(401);
    expect((await me(someoneElse)).statusCode).toBe(200);

    const fresh = await login(t.app, 'hanna', 'hanna-password-1');
    expect((await me(fresh)).json()).toMatchObject({ username: 'hanna' });
  });
});
