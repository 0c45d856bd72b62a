// Two-factor sign-in as a user lives it (contract §1): enrolment, the two-step login, codes that work
// once only (also under a race), pending tokens that are single use, short-lived and limited to 5 wrong
// codes, and turning TOTP off again. Codes come from the secret the API returned, on a FakeClock that
// moves 30 s whenever a fresh code (a new time step) is needed.
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { bearer, login, seedUser } from './helpers/identity.js';

const USER = 'alice';
const PASSWORD = 'alice-password-1';
const STEP_MS = 30_000;

const clock = new FakeClock();
let t: TestApp;
let secret: string;

beforeAll(async () => {
  t = await buildTestApp({ clock });
  await seedUser(t, USER, PASSWORD);
});
afterAll(() => t.close());

const epochAt = (ms: number) => Math.floor(ms / 1000);
const codeAt = (ms: number) => generate({ secret, epoch: epochAt(ms) });
const currentCode = () => codeAt(clock.now().getTime());

/** A code of a new time step, one no earlier request can have used. */
async function freshCode(): Promise<string> {
  await clock.advance(STEP_MS);
  return currentCode();
}

/** Six digits that are not valid for the previous, current or next step (the ±1 window). */
async function wrongCode(): Promise<string> {
  const now = clock.now().getTime();
  const valid = new Set(await Promise.all([-1, 0, 1].map((k) => codeAt(now + k * STEP_MS))));
  for (let n = 0; ; n++) {
    const candidate = String(n).padStart(6, '0');
    if (!valid.has(candidate)) return candidate;
  }
}

const post = (url: string, payload: object, token?: string) =>
  t.app.inject({ method: 'POST', url: `/api/v1${url}`, payload, headers: token ? bearer(token) : {} });
const me = (token: string) => t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(token) });
const loginRaw = () => post('/auth/login', { username: USER, password: PASSWORD });
const validate = (pending_token: string, code: string) => post('/auth/2fa/validate', { pending_token, code });

function expect401(res: { statusCode: number; json(): unknown; headers: Record<string, unknown> }) {
  expect(res.statusCode).toBe(401);
  expect(res.json()).toMatchObject({ code: expect.any(String), request_id: res.headers['x-request-id'] });
}

/** Step one of a TOTP login: the pending token. */
async function pendingToken(): Promise<string> {
  const res = await loginRaw();
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json() as { pending_token?: string };
  expect(body.pending_token).toBeTypeOf('string');
  return body.pending_token!;
}

/** Both steps with a fresh code: an access token. */
async function signInWithTotp(): Promise<string> {
  const pending = await pendingToken();
  const res = await validate(pending, await freshCode());
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { token: string }).token;
}

describe('enrolment', () => {
  let token: string;
  beforeAll(async () => {
    token = await login(t.app, USER, PASSWORD);
  });

  it('hands out a base32 secret and an otpauth URL, without turning TOTP on yet', async () => {
    const res = await post('/auth/2fa/setup', {}, token);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { secret: string; otpauth_url: string };
    expect(Object.keys(body).sort()).toEqual(['otpauth_url', 'secret']);
    expect(body.secret).toMatch(/^[A-Z2-7]{16,}=*$/);
    expect(body.otpauth_url).toMatch(/^otpauth:\/\/totp\//);
    expect(body.otpauth_url).toContain(`secret=${body.secret}`);
    expect(body.otpauth_url).toContain(USER);
    secret = body.secret;

    expect((await me(token)).json()).toMatchObject({ username: USER, totp_enabled: false });
    // Not confirmed yet, so the password alone still signs in.
    expect(await login(t.app, USER, PASSWORD)).toBeTypeOf('string');
  });

  it('refuses a wrong confirmation code and leaves TOTP off, audited as a failure (not "enabled")', async () => {
    expect401(await post('/auth/2fa/confirm', { code: await wrongCode() }, token));
    expect((await me(token)).json()).toMatchObject({ totp_enabled: false });
    const confirms = () => t.db.db.selectFrom('audit_log').select(['action', 'status_code']).where('path', '=', '/api/v1/auth/2fa/confirm').execute();
    await vi.waitFor(async () => expect(await confirms()).toEqual([{ action: 'auth.2fa_enable_failed', status_code: 401 }]));
  });

  it('turns TOTP on with a right code, and refuses a second setup', async () => {
    const res = await post('/auth/2fa/confirm', { code: await freshCode() }, token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ totp_enabled: true });
    expect((await me(token)).json()).toMatchObject({ username: USER, totp_enabled: true });

    const again = await post('/auth/2fa/setup', {}, token);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'CONFLICT' });
  });

  it('keeps the secret encrypted at rest', async () => {
    const row = await t.db.db.selectFrom('users').select(['totp_secret', 'totp_pending_secret']).where('username', '=', USER).executeTakeFirstOrThrow();
    expect(row.totp_pending_secret).toBeNull();
    expect(row.totp_secret).toMatch(/^v1:/);
    expect(row.totp_secret).not.toContain(secret);
    expect(Buffer.from(row.totp_secret!.slice(3), 'base64').toString('latin1')).not.toContain(secret);
  });
});

describe('two-step login', () => {
  it('answers the password with a pending token only', async () => {
    const before = clock.now().getTime();
    const res = await loginRaw();
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      totp_required: true,
      pending_token: expect.any(String),
      expires_at: new Date(before + 5 * 60_000).toISOString(),
      methods: ['totp'],
    });
  });

  it('never accepts a pending token as an access token', async () => {
    expect401(await me(await pendingToken()));
  });

  it('exchanges a pending token and a right code for an access token', async () => {
    const pending = await pendingToken();
    const res = await validate(pending, await freshCode());
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { token: string };
    expect(body).toEqual({
      token: expect.any(String),
      token_type: 'Bearer',
      expires_at: new Date(clock.now().getTime() + 8 * 3600_000).toISOString(),
      user: {
        id: expect.any(Number),
        username: USER,
        totp_enabled: true,
        created_at: expect.stringMatching(/Z$/),
        last_login_at: clock.now().toISOString(),
        role: 'admin',
        customer_ids: null,
      },
    });
    expect((await me(body.token)).json()).toMatchObject({ username: USER, totp_enabled: true });
  });

  it('refuses a code whose time step was already used (replay)', async () => {
    const pending = await pendingToken();
    const code = await freshCode();
    expect((await validate(pending, code)).statusCode).toBe(200);
    expect401(await validate(await pendingToken(), code));
  });

  it('accepts one code only once when two logins race with it', async () => {
    const [a, b] = [await pendingToken(), await pendingToken()];
    const code = await freshCode();
    const results = await Promise.all([validate(a, code), validate(b, code)]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 401]);
  });

  it('never accepts an access token as a pending token', async () => {
    const access = await signInWithTotp();
    expect401(await validate(access, await freshCode()));
  });

  it('uses a pending token once only', async () => {
    const pending = await pendingToken();
    expect((await validate(pending, await freshCode())).statusCode).toBe(200);
    expect401(await validate(pending, await freshCode()));
  });

  it('gives up on a pending token after 5 wrong codes', async () => {
    const pending = await pendingToken();
    for (let i = 0; i < 5; i++) expect401(await validate(pending, await wrongCode()));
    const code = await freshCode();
    expect401(await validate(pending, code));
    // The same code still works on a new pending token, so it was the token that was refused.
    expect((await validate(await pendingToken(), code)).statusCode).toBe(200);
  });

  it('lets a pending token expire after 5 minutes', async () => {
    const pending = await pendingToken();
    await clock.advance(5 * 60_000 + 1000);
    const code = await currentCode();
    expect401(await validate(pending, code));
    expect((await validate(await pendingToken(), code)).statusCode).toBe(200);
  });
});

describe('disabling TOTP', () => {
  let older: string;
  let current: string;
  beforeAll(async () => {
    older = await signInWithTotp();
    current = await signInWithTotp();
  });

  it('refuses a wrong password or a wrong code and leaves TOTP on', async () => {
    const code = await freshCode();
    expect401(await post('/auth/2fa/disable', { password: 'not-the-password', code }, current));
    expect401(await post('/auth/2fa/disable', { password: PASSWORD, code: await wrongCode() }, current));
    expect((await me(current)).json()).toMatchObject({ totp_enabled: true });
  });

  it('turns TOTP off with password and code, ending every session of the user', async () => {
    const res = await post('/auth/2fa/disable', { password: PASSWORD, code: await freshCode() }, current);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ totp_enabled: false });

    expect401(await me(current));
    expect401(await me(older));

    const token = await login(t.app, USER, PASSWORD);
    expect((await me(token)).json()).toMatchObject({ username: USER, totp_enabled: false });
  });
});
