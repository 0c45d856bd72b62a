// Passkeys through the API (issue 35, Build 3): registration bound to the browser's origin, several
// named passkeys, rename and delete (only one's own), and a passkey as the second sign-in step, with
// wrong, replayed and cloned answers refused. A software authenticator signs for real; the server's
// verification, database and sessions are the real ones.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/admin/commands.js';
import { createCoreServices } from '../src/apps/server/services.js';
import { systemClock } from '../src/platform/clock.js';
import { buildTestApp, testSecrets, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createKey, login, seedUser } from './helpers/identity.js';
import { SoftAuthenticator, type CreationOptions, type RequestOptions } from './helpers/soft-authenticator.js';

const ORIGIN = 'http://localhost';
const PASSWORD = 'pia-password-42';
let t: TestApp;
let token: string;
let key: SoftAuthenticator;

const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: `/api/v1${url}`, headers: { origin: ORIGIN, ...headers }, payload: payload as object });

async function addPasskey(authenticator: SoftAuthenticator, userToken: string, name: string) {
  const options = await post('/auth/passkeys/registration-options', {}, bearer(userToken));
  expect(options.statusCode, options.body).toBe(200);
  const res = await post('/auth/passkeys', { name, response: authenticator.register(options.json<CreationOptions>()) }, bearer(userToken));
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: number; name: string }>();
}

async function pendingLogin(username = 'pia', password = PASSWORD) {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ pending_token?: string; methods?: string[]; token?: string }>();
}

async function secondStepOptions(pendingToken: string) {
  const res = await post('/auth/2fa/passkey-options', { pending_token: pendingToken });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<RequestOptions & { userVerification: string }>();
}

beforeAll(async () => {
  t = await buildTestApp({ env: { PUBLIC_URL: ORIGIN } }); // passkeys are made only with PUBLIC_URL set
  await seedUser(t, 'pia', PASSWORD, { role: 'read' });
  token = await login(t.app, 'pia', PASSWORD);
  key = new SoftAuthenticator(ORIGIN);
});
afterAll(() => t.close());

describe('registering passkeys', () => {
  it('gives options for this origin and stores a verified passkey under its name', async () => {
    const options = await post('/auth/passkeys/registration-options', {}, bearer(token));
    expect(options.statusCode, options.body).toBe(200);
    const body = options.json<CreationOptions & { rp: { id: string; name: string }; user: { name: string }; excludeCredentials: unknown[] }>();
    expect(body.rp).toEqual({ id: 'localhost', name: 'RMM' });
    expect(body.user.name).toBe('pia');
    expect(body.excludeCredentials).toEqual([]);
    const res = await post('/auth/passkeys', { name: 'YubiKey', response: key.register(body) }, bearer(token));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({ id: expect.any(Number), name: 'YubiKey', created_at: expect.any(String), last_used_at: null });
    const rows = await t.db.db.selectFrom('passkeys').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ credential_id: key.credentials[0]!.id, counter: 0, transports: '["usb"]', name: 'YubiKey' });
    // The challenge was used up.
    expect(await t.db.db.selectFrom('webauthn_challenges').selectAll().where('purpose', '=', 'register').execute()).toEqual([]);
  });

  it('excludes registered passkeys from new options and lists several by name', async () => {
    const options = (await post('/auth/passkeys/registration-options', {}, bearer(token))).json<{ excludeCredentials: Array<{ id: string }> }>();
    expect(options.excludeCredentials.map((c) => c.id)).toEqual([key.credentials[0]!.id]);
    await addPasskey(key, token, 'Laptop');
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/auth/passkeys', headers: bearer(token) });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json<Array<{ name: string }>>().map((p) => p.name)).toEqual(['YubiKey', 'Laptop']);
  });

  it('refuses a request without Origin, from a foreign origin, or to an IP address (403), storing nothing', async () => {
    const before = await t.db.db.selectFrom('webauthn_challenges').selectAll().execute();
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/auth/passkeys/registration-options', headers: bearer(token), payload: {} }), 403, 'FORBIDDEN');
    expectError(await post('/auth/passkeys/registration-options', {}, { ...bearer(token), origin: 'https://evil.example' }), 403, 'FORBIDDEN');
    expectError(await post('/auth/passkeys/registration-options', {}, { ...bearer(token), origin: 'http://127.0.0.1', host: '127.0.0.1' }), 403, 'FORBIDDEN');
    expect(await t.db.db.selectFrom('webauthn_challenges').selectAll().execute()).toEqual(before);
  });

  it('refuses a replayed answer, an answer from another origin and a malformed one (401), storing nothing', async () => {
    const other = new SoftAuthenticator(ORIGIN);
    const options = (await post('/auth/passkeys/registration-options', {}, bearer(token))).json<CreationOptions>();
    const answer = other.register(options);
    const foreign = new SoftAuthenticator('https://evil.example').register(options);
    expectError(await post('/auth/passkeys', { name: 'Evil', response: foreign }, bearer(token)), 401, 'INVALID_CREDENTIALS');
    // The foreign answer used up the challenge: the genuine answer to it is refused too.
    expectError(await post('/auth/passkeys', { name: 'Late', response: answer }, bearer(token)), 401, 'INVALID_CREDENTIALS');
    const garbled = { ...answer, response: { ...answer.response, clientDataJSON: 'bm90LWpzb24' } };
    expectError(await post('/auth/passkeys', { name: 'Garbled', response: garbled }, bearer(token)), 401, 'INVALID_CREDENTIALS');
    expectError(await post('/auth/passkeys', { name: 'x'.repeat(101), response: answer }, bearer(token)), 400, 'VALIDATION_ERROR');
    expect(await t.db.db.selectFrom('passkeys').select('name').execute()).toHaveLength(2);
  });

  it('is for signed-in users only: keys get 403, no credentials 401', async () => {
    const admin = await adminToken(t);
    const writeKey = await createKey(t.app, bearer(admin), 'admin');
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/auth/passkeys', headers: apiKey(writeKey.key) }), 403, 'FORBIDDEN');
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/auth/passkeys' }), 401, 'UNAUTHORIZED');
  });
});

describe('a passkey as the second sign-in step', () => {
  it('turns a password sign-in into a pending one offering the passkey', async () => {
    const pending = await pendingLogin();
    expect(pending.token).toBeUndefined();
    expect(pending.methods).toEqual(['passkey']);
  });

  it("signs in with any of the user's passkeys and records the use", async () => {
    const pending = await pendingLogin();
    const options = await secondStepOptions(pending.pending_token!);
    expect(options.allowCredentials!.map((c) => c.id).sort()).toEqual(key.credentials.map((c) => c.id).sort());
    expect(options.rpId).toBe('localhost');
    const res = await post('/auth/2fa/passkey', { pending_token: pending.pending_token, response: key.assert(options, { credential: key.credentials[1] }) });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ token: string; user: { username: string } }>();
    expect(body.user.username).toBe('pia');
    const sessions = await t.app.inject({ method: 'GET', url: '/api/v1/auth/sessions', headers: bearer(body.token) });
    expect(sessions.json<Array<{ method: string; current: boolean }>>().find((s) => s.current)?.method).toBe('passkey');
    const list = (await t.app.inject({ method: 'GET', url: '/api/v1/auth/passkeys', headers: bearer(body.token) })).json<Array<{ name: string; last_used_at: string | null }>>();
    expect(list.find((p) => p.name === 'Laptop')?.last_used_at).not.toBeNull();
    // The pending login is used up.
    expectError(await post('/auth/2fa/passkey-options', { pending_token: pending.pending_token }), 401, 'INVALID_CREDENTIALS');
  });

  it("refuses another user's passkey, a wrong signature and a replay (401), each a wrong try", async () => {
    await seedUser(t, 'olaf', 'olaf-password-9');
    const olafKey = new SoftAuthenticator(ORIGIN);
    await addPasskey(olafKey, await login(t.app, 'olaf', 'olaf-password-9'), 'Olaf');
    const pending = await pendingLogin();
    const options = await secondStepOptions(pending.pending_token!);
    const good = key.assert(options);
    const badSignature = { ...good, response: { ...good.response, signature: key.assert(options).response.signature.replace(/^.{4}/, 'AAAA') } };
    expectError(await post('/auth/2fa/passkey', { pending_token: pending.pending_token, response: badSignature }), 401, 'INVALID_CREDENTIALS');
    // The wrong answer used up the challenge: even the right one needs new options now.
    expectError(await post('/auth/2fa/passkey', { pending_token: pending.pending_token, response: good }), 401, 'INVALID_CREDENTIALS');
    const fresh = await secondStepOptions(pending.pending_token!);
    const olafs = olafKey.assert(fresh, { credential: olafKey.credentials[0] });
    expectError(await post('/auth/2fa/passkey', { pending_token: pending.pending_token, response: olafs }), 401, 'INVALID_CREDENTIALS');
    const row = await t.db.db.selectFrom('pending_logins').select('failed_attempts').orderBy('expires_at', 'desc').executeTakeFirstOrThrow();
    expect(row.failed_attempts).toBe(3);
  });

  it('stops a pending login after 5 wrong answers', async () => {
    const pending = await pendingLogin();
    for (let i = 0; i < 5; i++) {
      const options = await secondStepOptions(pending.pending_token!);
      const answer = key.assert(options, { origin: 'https://evil.example' });
      expectError(await post('/auth/2fa/passkey', { pending_token: pending.pending_token, response: answer }), 401, 'INVALID_CREDENTIALS');
    }
    expectError(await post('/auth/2fa/passkey-options', { pending_token: pending.pending_token }), 401, 'INVALID_CREDENTIALS');
  });

  it('refuses a counter that went backwards (a cloned key) and keeps the stored counter', async () => {
    const pending = await pendingLogin();
    const options = await secondStepOptions(pending.pending_token!);
    const credential = key.credentials[1]!; // used once above
    const stored = await t.db.db.selectFrom('passkeys').select('counter').where('credential_id', '=', credential.id).executeTakeFirstOrThrow();
    expect(stored.counter).toBeGreaterThan(0);
    credential.counter = 0; // the clone's counter is behind: it signs with 1
    expectError(await post('/auth/2fa/passkey', { pending_token: pending.pending_token, response: key.assert(options, { credential }) }), 401, 'INVALID_CREDENTIALS');
    expect((await t.db.db.selectFrom('passkeys').select('counter').where('credential_id', '=', credential.id).executeTakeFirstOrThrow()).counter).toBe(stored.counter);
    credential.counter = stored.counter;
  });
});

describe('naming and deleting passkeys', () => {
  it("renames and deletes one's own; another user's id is 404 and changes nothing", async () => {
    const mine = (await t.app.inject({ method: 'GET', url: '/api/v1/auth/passkeys', headers: bearer(token) })).json<Array<{ id: number; name: string }>>();
    const renamed = await t.app.inject({ method: 'PATCH', url: `/api/v1/auth/passkeys/${mine[0]!.id}`, headers: bearer(token), payload: { name: '  Blue key  ' } });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ id: mine[0]!.id, name: 'Blue key' });
    const other = await seedUser(t, 'quinn', 'quinn-password-1');
    const quinn = await login(t.app, 'quinn', 'quinn-password-1');
    expect(other).toBeGreaterThan(0);
    expectError(await t.app.inject({ method: 'PATCH', url: `/api/v1/auth/passkeys/${mine[0]!.id}`, headers: bearer(quinn), payload: { name: 'Mine now' } }), 404, 'NOT_FOUND');
    expectError(await t.app.inject({ method: 'DELETE', url: `/api/v1/auth/passkeys/${mine[0]!.id}`, headers: bearer(quinn) }), 404, 'NOT_FOUND');
    for (const p of mine) {
      const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/auth/passkeys/${p.id}`, headers: bearer(token) });
      expect(res.statusCode, res.body).toBe(200);
    }
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/auth/passkeys', headers: bearer(token) })).json()).toEqual([]);
    // Without passkeys (and without TOTP) the password alone signs in again.
    expect((await pendingLogin()).token).toEqual(expect.any(String));
  });

  it('audits adding, renaming and deleting, and the passkey sign-in', async () => {
    const admin = await adminToken(t);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/audit?limit=1000', headers: bearer(admin) });
    const actions = res.json<Array<{ actor: string; action: string }>>().filter((e) => e.actor === 'pia').map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['auth.passkey_added', 'auth.passkey_renamed', 'auth.passkey_deleted', 'auth.login', 'auth.2fa_failed']));
  });
});

describe('recovery by an operator', () => {
  it('`user remove-passkeys` removes them all and ends the sessions; the password alone signs in again', async () => {
    await seedUser(t, 'vera', 'vera-password-8');
    const vera = await login(t.app, 'vera', 'vera-password-8');
    const lost = new SoftAuthenticator(ORIGIN);
    await addPasskey(lost, vera, 'Lost key');
    await addPasskey(lost, vera, 'Lost phone');
    expect((await pendingLogin('vera', 'vera-password-8')).methods).toEqual(['passkey']);
    const out: string[] = [];
    const code = await runAdminCommand({ argv: ['user', 'remove-passkeys', 'vera'] }, { services: createCoreServices(t.db, testSecrets(), systemClock), out: (line) => out.push(line) });
    expect(code).toBe(0);
    expect(out).toEqual(["removed 2 passkey(s) of vera; the user's sessions have ended"]);
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/auth/passkeys', headers: bearer(vera) }), 401, 'UNAUTHORIZED');
    expect((await pendingLogin('vera', 'vera-password-8')).token).toEqual(expect.any(String));
  });
});
