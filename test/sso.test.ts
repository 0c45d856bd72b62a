// Single sign-on with OpenID Connect against a real provider (oidc-provider on a loopback port), driven
// at the API: the first sign-in creates the user with the mapped role and customer and the second finds
// the same user; state, nonce and PKCE cannot be replayed or tampered with; a provider without
// auto_create refuses strangers; a local user's name is never taken over; the client secret is only
// ever a hint; and password sign-in can be turned off for everyone but admins.
import { generate } from 'otplib';
import { sql } from 'kysely';
import { MAX_OPEN_LOGINS } from '../src/modules/sso/sso-login.service.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { freePort } from './helpers/free-port.js';
import { adminToken, apiKey, bearer, createCustomer, createKey, login, seedUser } from './helpers/identity.js';
import { startTestIdp, type TestIdp } from './helpers/test-idp.js';

const CONSOLE = 'http://rmm.test';
const SECRET = 'idp-client-secret-0123456789';

let t: TestApp;
let idp: TestIdp;
let admin: string;
let customerId: number;
let providerId: number;
let strictId: number;

interface Provider {
  id: number;
  redirect_uri: string;
  client_secret_hint: string;
}

async function addProvider(body: Record<string, unknown>): Promise<Provider> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/sso/providers', headers: bearer(admin), payload: body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<Provider>();
}

/** Start → provider → callback, as a browser with cookie `browser` would; the callback's redirect. */
async function throughProvider(id: number, tamper?: (url: URL) => void) {
  const start = await t.app.inject({ method: 'GET', url: `/api/v1/auth/sso/${id}/start` });
  expect(start.statusCode, start.body).toBe(303);
  const cookie = String(start.headers['set-cookie']).split(';')[0]!;
  const authUrl = new URL(start.headers.location!);
  tamper?.(authUrl);
  const callback = await idp.authorize(authUrl.href);
  expect(callback.origin).toBe(CONSOLE);
  return { cookie, callbackPath: `${callback.pathname}${callback.search}` };
}

async function callback(path: string, cookie: string) {
  const res = await t.app.inject({ method: 'GET', url: path, headers: cookie ? { cookie } : {} });
  expect(res.statusCode, res.body).toBe(303);
  const location = new URL(res.headers.location!);
  expect(location.origin).toBe(CONSOLE);
  return new URLSearchParams(location.hash.slice(1));
}

function exchange(ticket: string, cookie: string) {
  return t.app.inject({ method: 'POST', url: '/api/v1/auth/sso/exchange', headers: cookie ? { cookie } : {}, payload: { ticket } });
}

/** A whole sign-in; the exchange's answer. */
async function signIn(id: number) {
  const { cookie, callbackPath } = await throughProvider(id);
  const fragment = await callback(callbackPath, cookie);
  const ticket = fragment.get('sso_ticket');
  expect(ticket, fragment.get('sso_error') ?? '').toBeTruthy();
  return exchange(ticket!, cookie);
}

/** A sign-in that must end on the sign-in page with a message; the message. */
async function refusedSignIn(id: number): Promise<string> {
  const { cookie, callbackPath } = await throughProvider(id);
  const fragment = await callback(callbackPath, cookie);
  expect(fragment.get('sso_ticket')).toBeNull();
  return fragment.get('sso_error') ?? '';
}

const userCount = async () => Number((await t.db.db.selectFrom('users').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

beforeAll(async () => {
  t = await buildTestApp({ env: { PUBLIC_URL: CONSOLE } });
  admin = await adminToken(t);
  customerId = (await createCustomer(t.app, admin, 'SSO-1')).id;
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const open = await addProvider({
    name: 'Contoso',
    issuer,
    client_id: 'rmm',
    client_secret: SECRET,
    role_claim: 'groups',
    mappings: [{ value: 'techs', role: 'write', customer_ids: [customerId] }],
    auto_create: true,
  });
  const strict = await addProvider({ name: 'Strict', issuer, client_id: 'rmm-strict', client_secret: SECRET });
  providerId = open.id;
  strictId = strict.id;
  idp = await startTestIdp(port, [
    { client_id: 'rmm', client_secret: SECRET, redirect_uris: [open.redirect_uri] },
    { client_id: 'rmm-strict', client_secret: SECRET, redirect_uris: [strict.redirect_uri] },
  ]);
  idp.accounts.set('sub-anna', { preferred_username: 'Anna@Contoso.example', groups: ['techs'] });
  idp.accounts.set('sub-bob', { preferred_username: 'bob', groups: ['others'] });
  idp.accounts.set('sub-carol', { preferred_username: 'carol', groups: ['techs'] });
});
afterAll(async () => {
  await idp?.close();
  await t?.close();
});

describe('provider settings', () => {
  it('keeps the client secret sealed and answers only its hint, with the redirect URI to register', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/sso/providers', headers: bearer(admin) });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain(SECRET);
    const [first] = res.json<Provider[]>();
    expect(first).toMatchObject({ client_secret_hint: `…${SECRET.slice(-4)}`, redirect_uri: `${CONSOLE}/api/v1/auth/sso/${first!.id}/callback` });
    expect(first).not.toHaveProperty('client_secret');
    const stored = await t.db.db.selectFrom('sso_providers').select('client_secret').execute();
    for (const row of stored) expect(row.client_secret).not.toContain(SECRET);
    const changed = await t.app.inject({ method: 'PUT', url: `/api/v1/sso/providers/${strictId}`, headers: bearer(admin), payload: { scopes: 'openid profile' } });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.body).not.toContain(SECRET);
    const audit = await t.app.inject({ method: 'GET', url: '/api/v1/audit', headers: bearer(admin) });
    expect(audit.body).not.toContain(SECRET);
  });

  it('refuses plain http issuers except on loopback, and customers that do not exist', async () => {
    const base = { name: 'X', client_id: 'x', client_secret: 'x-secret-123456' };
    for (const issuer of ['http://idp.example.com', 'http://10.0.0.5:8080', 'ftp://idp.example.com', 'https://u:p@idp.example.com', 'not a url']) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/sso/providers', headers: bearer(admin), payload: { ...base, issuer } });
      expect(res.statusCode, issuer).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', request_id: expect.any(String) });
    }
    const ghost = await t.app.inject({ method: 'POST', url: '/api/v1/sso/providers', headers: bearer(admin), payload: { ...base, issuer: 'https://idp.example.com', default_customer_ids: [999999] } });
    expect(ghost.statusCode).toBe(400);
    for (const [i, issuer] of ['http://localhost:9/', 'http://[::1]:9', 'https://idp.example.com/tenant'].entries()) {
      const ok = await t.app.inject({ method: 'POST', url: '/api/v1/sso/providers', headers: bearer(admin), payload: { ...base, name: `ok ${i}`, issuer, enabled: false } });
      expect(ok.statusCode, ok.body).toBe(201);
      expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/sso/providers/${ok.json<Provider>().id}`, headers: bearer(admin) })).statusCode).toBe(200);
    }
  });

  it('is for signed-in admins only; the sign-in page lists enabled providers without credentials', async () => {
    const key = await createKey(t.app, bearer(admin), 'admin');
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/sso/providers', headers: apiKey(key.key) })).statusCode).toBe(403);
    await seedUser(t, 'reader', 'reader-password-1', { role: 'read' });
    const reader = await login(t.app, 'reader', 'reader-password-1');
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/sso/providers', headers: bearer(reader) })).statusCode).toBe(403);
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/auth/sso/providers' });
    expect(list.json()).toEqual([
      { id: providerId, name: 'Contoso', start_url: `/api/v1/auth/sso/${providerId}/start` },
      { id: strictId, name: 'Strict', start_url: `/api/v1/auth/sso/${strictId}/start` },
    ]);
  });
});

describe('signing in', () => {
  let annaId: number;

  it('creates the user on the first sign-in with the mapped role and customer', async () => {
    const before = await userCount();
    idp.next = { accountId: 'sub-anna', amr: ['pwd'] };
    const res = await signIn(providerId);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ token: string; user: { id: number; username: string; role: string; customer_ids: number[] | null } }>();
    expect(body.user).toMatchObject({ username: 'anna@contoso.example', role: 'write', customer_ids: [customerId] });
    expect(await userCount()).toBe(before + 1);
    annaId = body.user.id;
    const sessions = await t.app.inject({ method: 'GET', url: '/api/v1/auth/sessions', headers: bearer(body.token) });
    expect(sessions.json<Array<{ method: string }>>().map((s) => s.method)).toEqual(['sso']);
  });

  it('finds the same user on the second sign-in, and uses the defaults when no mapping matches', async () => {
    const before = await userCount();
    idp.next = { accountId: 'sub-anna', amr: ['pwd'] };
    const again = await signIn(providerId);
    expect(again.json<{ user: { id: number } }>().user.id).toBe(annaId);
    expect(await userCount()).toBe(before);
    idp.next = { accountId: 'sub-bob', amr: ['pwd'] };
    const bob = await signIn(providerId);
    expect(bob.json<{ user: unknown }>().user).toMatchObject({ username: 'bob', role: 'read', customer_ids: [] });
  });

  it('asks a user with TOTP for the code unless the provider reports mfa', async () => {
    idp.next = { accountId: 'sub-anna', amr: ['pwd'] };
    const token = (await signIn(providerId)).json<{ token: string }>().token;
    const setup = await t.app.inject({ method: 'POST', url: '/api/v1/auth/2fa/setup', headers: bearer(token), payload: {} });
    const secret = setup.json<{ secret: string }>().secret;
    // Confirmed with the previous time step's code, so the current one is still unused for the sign-in.
    const confirm = await t.app.inject({ method: 'POST', url: '/api/v1/auth/2fa/confirm', headers: bearer(token), payload: { code: await generate({ secret, epoch: Math.floor(Date.now() / 1000) - 30 }) } });
    expect(confirm.statusCode, confirm.body).toBe(200);

    idp.next = { accountId: 'sub-anna', amr: ['pwd'] };
    const pending = await signIn(providerId);
    expect(pending.json()).toMatchObject({ totp_required: true, methods: ['totp'] });
    const validated = await t.app.inject({ method: 'POST', url: '/api/v1/auth/2fa/validate', payload: { pending_token: pending.json<{ pending_token: string }>().pending_token, code: await generate({ secret }) } });
    expect(validated.statusCode, validated.body).toBe(200);

    idp.next = { accountId: 'sub-anna', amr: ['pwd', 'mfa'] };
    const direct = await signIn(providerId);
    expect(direct.json()).toMatchObject({ token: expect.any(String), user: { id: annaId } });
  });

  it('refuses strangers when the provider may not create users', async () => {
    const before = await userCount();
    idp.next = { accountId: 'sub-carol', amr: ['pwd'] };
    expect(await refusedSignIn(strictId)).toMatch(/No user here is linked to this Strict account/);
    expect(await userCount()).toBe(before);
  });

  it('never links a provider account to an existing local user of the same name', async () => {
    await seedUser(t, 'carol', 'carol-password-1', { role: 'admin' });
    idp.next = { accountId: 'sub-carol', amr: ['pwd', 'mfa'] };
    expect(await refusedSignIn(providerId)).toMatch(/A user named "carol" already exists here and is not linked/);
    expect(await t.db.db.selectFrom('sso_identities').selectAll().where('subject', '=', 'sub-carol').execute()).toEqual([]);
    const carol = await t.db.db.selectFrom('users').select('id').where('username', '=', 'carol').executeTakeFirstOrThrow();
    expect(await t.db.db.selectFrom('user_sessions').selectAll().where('user_id', '=', carol.id).execute()).toEqual([]);
    const audit = await t.app.inject({ method: 'GET', url: '/api/v1/audit?limit=5', headers: bearer(admin) });
    expect(audit.json<Array<{ action: string; actor: string }>>()).toEqual(expect.arrayContaining([expect.objectContaining({ action: 'auth.sso_refused', actor: 'carol' })]));
  });

  it('shows the provider\'s own refusal on the sign-in page', async () => {
    idp.next = { accountId: 'sub-anna', amr: ['pwd'], error: 'access_denied' };
    expect(await refusedSignIn(providerId)).toBe('Contoso did not sign you in: The user cancelled the sign-in');
  });
});

describe('replays and tampering', () => {
  it('spends the state once and only for the browser that started the sign-in', async () => {
    idp.next = { accountId: 'sub-anna', amr: ['pwd', 'mfa'] };
    const first = await throughProvider(providerId);
    const other = await throughProvider(providerId);
    // Another browser's cookie, or none: refused, and the state is not spent by it.
    expect((await callback(first.callbackPath, other.cookie)).get('sso_error')).toMatch(/expired or was started in another browser/);
    expect((await callback(first.callbackPath, '')).get('sso_error')).toMatch(/expired or was started in another browser/);
    const tamperedState = first.callbackPath.replace(/state=[^&]+/, 'state=forged');
    expect((await callback(tamperedState, first.cookie)).get('sso_error')).toMatch(/expired/);
    // To the wrong provider's callback: its state does not belong there.
    expect((await callback(first.callbackPath.replace(`/sso/${providerId}/`, `/sso/${strictId}/`), first.cookie)).get('sso_error')).toMatch(/expired/);
    const ok = await callback(first.callbackPath, first.cookie);
    expect(ok.get('sso_ticket')).toBeTruthy();
    // Replayed: the state is spent.
    expect((await callback(first.callbackPath, first.cookie)).get('sso_error')).toMatch(/expired/);
  });

  it('refuses a forged code, and an answer whose nonce or PKCE challenge was changed on the way', async () => {
    idp.next = { accountId: 'sub-anna', amr: ['pwd', 'mfa'] };
    const forged = await throughProvider(providerId);
    expect((await callback(forged.callbackPath.replace(/code=[^&]+/, 'code=forged'), forged.cookie)).get('sso_error')).toMatch(/could not be verified/);
    const nonce = await throughProvider(providerId, (url) => url.searchParams.set('nonce', 'attacker-nonce'));
    expect((await callback(nonce.callbackPath, nonce.cookie)).get('sso_error')).toMatch(/could not be verified/);
    const pkce = await throughProvider(providerId, (url) => url.searchParams.set('code_challenge', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'));
    expect((await callback(pkce.callbackPath, pkce.cookie)).get('sso_error')).toMatch(/could not be verified/);
  });

  it('takes a ticket once, from the same browser only', async () => {
    idp.next = { accountId: 'sub-anna', amr: ['pwd', 'mfa'] };
    const { cookie, callbackPath } = await throughProvider(providerId);
    const ticket = (await callback(callbackPath, cookie)).get('sso_ticket')!;
    const other = (await throughProvider(providerId)).cookie;
    for (const [res, why] of [[await exchange(ticket, other), 'other browser'], [await exchange(ticket, ''), 'no cookie'], [await exchange(`${ticket}x`, cookie), 'forged']] as const) {
      expect(res.statusCode, why).toBe(401);
      expect(res.json()).toMatchObject({ code: 'INVALID_CREDENTIALS', request_id: expect.any(String) });
    }
    expect((await exchange(ticket, cookie)).statusCode).toBe(200);
    expect((await exchange(ticket, cookie)).statusCode).toBe(401);
  });

  it('stores at most MAX_OPEN_LOGINS sign-ins in progress: anonymous starts cannot fill the database', async () => {
    await sql`insert into sso_logins (state, provider_id, browser_hash, code_verifier, nonce, redirect_uri, expires_at)
      select 'flood-' || n, ${providerId}, 'h', 'v', 'n', 'r', now() + interval '10 minutes' from generate_series(1, ${MAX_OPEN_LOGINS}) as n`.execute(t.db.db);
    const start = await t.app.inject({ method: 'GET', url: `/api/v1/auth/sso/${providerId}/start` });
    expect(start.statusCode).toBe(303);
    expect(new URLSearchParams(new URL(start.headers.location!).hash.slice(1)).get('sso_error')).toMatch(/Too many single sign-ons/);
    await sql`delete from sso_logins where state like 'flood-%'`.execute(t.db.db);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/auth/sso/${providerId}/start` })).headers.location).toContain('state=');
  });

  it('refuses a disabled provider at the start', async () => {
    await t.app.inject({ method: 'PUT', url: `/api/v1/sso/providers/${strictId}`, headers: bearer(admin), payload: { enabled: false } });
    const start = await t.app.inject({ method: 'GET', url: `/api/v1/auth/sso/${strictId}/start` });
    expect(start.statusCode).toBe(303);
    expect(new URLSearchParams(new URL(start.headers.location!).hash.slice(1)).get('sso_error')).toMatch(/not available/);
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/auth/sso/providers' });
    expect(list.json<Array<{ id: number }>>().map((p) => p.id)).toEqual([providerId]);
  });
});

describe('password sign-in switched off for everyone but admins', () => {
  it('answers a non-admin\'s correct password with 403 and still lets admins in', async () => {
    await seedUser(t, 'writer', 'writer-password-1', { role: 'write' });
    const off = await t.app.inject({ method: 'PUT', url: '/api/v1/sso/password-login', headers: bearer(admin), payload: { password_login: 'admins_only' } });
    expect(off.json()).toEqual({ password_login: 'admins_only' });
    const writer = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'writer', password: 'writer-password-1' } });
    expect(writer.statusCode).toBe(403);
    expect(writer.json()).toMatchObject({ code: 'FORBIDDEN', request_id: expect.any(String) });
    // A wrong password is still the ordinary 401: the switch tells nothing about passwords.
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'writer', password: 'wrong-password' } })).statusCode).toBe(401);
    await login(t.app, 'admin', 'admin-password-1');
    await t.app.inject({ method: 'PUT', url: '/api/v1/sso/password-login', headers: bearer(admin), payload: { password_login: 'everyone' } });
    await login(t.app, 'writer', 'writer-password-1');
  });
});
