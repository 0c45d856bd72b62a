// Sign-in with a passkey alone (issue 35, Build 3): off by default (403, and the sign-in page is told so),
// turned on by an admin in the settings; then a passkey that verifies the user signs in with no
// password and no second step, even for a user with TOTP. Presence alone, expired or replayed
// challenges, unknown passkeys and a mismatched user handle are refused, and anonymous callers cannot
// pile up challenges.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, bearer, createKey, login, seedUser } from './helpers/identity.js';
import { ShiftedClock } from './helpers/shifted-clock.js';
import { SoftAuthenticator, type CreationOptions, type RequestOptions } from './helpers/soft-authenticator.js';

const ORIGIN = 'http://localhost';
const clock = new ShiftedClock();
let t: TestApp;
let admin: string;
let key: SoftAuthenticator;

const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: `/api/v1${url}`, headers: { origin: ORIGIN, ...headers }, payload: payload as object });

async function options(headers: Record<string, string> = {}) {
  const res = await post('/auth/passkey-options', {}, headers);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<RequestOptions & { userVerification: string }>();
}

beforeAll(async () => {
  t = await buildTestApp({ clock, env: { PUBLIC_URL: ORIGIN } }); // passkeys are made only with PUBLIC_URL set
  admin = await adminToken(t);
  await seedUser(t, 'rosa', 'rosa-password-3', { role: 'write' });
  const rosa = await login(t.app, 'rosa', 'rosa-password-3');
  key = new SoftAuthenticator(ORIGIN);
  const creation = await post('/auth/passkeys/registration-options', {}, bearer(rosa));
  const added = await post('/auth/passkeys', { name: 'Phone', response: key.register(creation.json<CreationOptions>()) }, bearer(rosa));
  expect(added.statusCode, added.body).toBe(201);
});
afterAll(() => t.close());

describe('while passwordless_login is off (the default)', () => {
  it('tells the sign-in page, and refuses options and answers with 403', async () => {
    const status = await t.app.inject({ method: 'GET', url: '/api/v1/auth/passkey-login' });
    expect(status.json()).toEqual({ passwordless_login: false });
    expectError(await post('/auth/passkey-options', {}), 403, 'FORBIDDEN');
    const answer = key.assert({ challenge: 'AAAAAAAAAAAAAAAAAAAAAA', rpId: 'localhost' });
    expectError(await post('/auth/passkey-login', { response: answer }), 403, 'FORBIDDEN');
  });

  it('may be turned on by an admin only (a read key may not)', async () => {
    const readKey = await createKey(t.app, bearer(admin), 'read');
    expectError(await t.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: { 'x-api-key': readKey.key }, payload: { passwordless_login: true } }), 403, 'FORBIDDEN');
    expectError(await t.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: bearer(admin), payload: { passwordless_login: 'yes' } }), 400, 'VALIDATION_ERROR');
    const res = await t.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: bearer(admin), payload: { passwordless_login: true } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ passwordless_login: true });
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/auth/passkey-login' })).json()).toEqual({ passwordless_login: true });
  });
});

describe('while passwordless_login is on', () => {
  it('gives discoverable-credential options that require user verification', async () => {
    const body = await options();
    expect(body.rpId).toBe('localhost');
    expect(body.userVerification).toBe('required');
    expect(body.allowCredentials ?? []).toEqual([]);
  });

  it('signs the passkey owner in with no second step, even with TOTP on', async () => {
    // Even a user with a second factor: the verified passkey is both factors.
    await t.db.db.updateTable('users').set({ totp_enabled: true, totp_secret: 'sealed-unused' }).where('username', '=', 'rosa').execute();
    const res = await post('/auth/passkey-login', { response: key.assert(await options()) });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ token: string; user: { username: string } }>();
    expect(body.user.username).toBe('rosa');
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(body.token) });
    expect(me.json()).toMatchObject({ username: 'rosa' });
    const audit = (await t.app.inject({ method: 'GET', url: '/api/v1/audit?limit=100', headers: bearer(admin) })).json<Array<{ actor: string; action: string }>>();
    expect(audit).toEqual(expect.arrayContaining([expect.objectContaining({ actor: 'rosa', action: 'auth.login' })]));
  });

  it('refuses presence without verification, a replay, an unknown passkey and a foreign user handle (401)', async () => {
    const sessionsBefore = await t.db.db.selectFrom('user_sessions').select('id').execute();
    key.userVerified = false;
    expectError(await post('/auth/passkey-login', { response: key.assert(await options()) }), 401, 'INVALID_CREDENTIALS');
    key.userVerified = true;
    const good = key.assert(await options());
    expect((await post('/auth/passkey-login', { response: good })).statusCode).toBe(200);
    expectError(await post('/auth/passkey-login', { response: good }), 401, 'INVALID_CREDENTIALS');
    const stranger = new SoftAuthenticator(ORIGIN);
    stranger.register({ challenge: 'AAAA', rp: { id: 'localhost' }, user: { id: 'MQ' } });
    expectError(await post('/auth/passkey-login', { response: stranger.assert(await options()) }), 401, 'INVALID_CREDENTIALS');
    const forged = key.assert(await options());
    expectError(await post('/auth/passkey-login', { response: { ...forged, response: { ...forged.response, userHandle: 'MQ' } } }), 401, 'INVALID_CREDENTIALS');
    expect(await t.db.db.selectFrom('user_sessions').select('id').execute()).toHaveLength(sessionsBefore.length + 1);
  });

  it('refuses an answer to a challenge older than 5 minutes', async () => {
    const stale = await options();
    clock.offsetMs += 5 * 60_000 + 1_000;
    try {
      expectError(await post('/auth/passkey-login', { response: key.assert(stale) }), 401, 'INVALID_CREDENTIALS');
    } finally {
      clock.offsetMs = 0;
    }
  });

  it('bounds the open challenges one address may hold (429), and leaves other addresses alone', async () => {
    await t.db.db.deleteFrom('webauthn_challenges').execute();
    for (let i = 0; i < 20; i++) await options();
    const refused = await post('/auth/passkey-options', {});
    expectError(refused, 429, 'TOO_MANY_ATTEMPTS');
    expect(refused.headers['retry-after']).toBe('60');
    const elsewhere = await t.app.inject({ method: 'POST', url: '/api/v1/auth/passkey-options', headers: { origin: ORIGIN }, payload: {}, remoteAddress: '10.1.2.3' });
    expect(elsewhere.statusCode, elsewhere.body).toBe(200);
    expect(await t.db.db.selectFrom('webauthn_challenges').select('challenge').execute()).toHaveLength(21);
  });
});
