// Which access tokens GET /auth/me accepts (contract §1: HS256 only, 8 h, typ "access", current ver):
// forged, tampered, expired and wrongly typed tokens are 401; and what /auth/me answers for a user and
// for an API key. Time is a FakeClock, so expiry is exact to the second.
import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { apiKey, bearer, createCustomer, createKey, login, seedUser } from './helpers/identity.js';

const HOUR = 60 * 60 * 1000;

let t: TestApp;
const clock = new FakeClock('2026-03-01T08:00:00Z');
let alice: number;
let bob: number;
/** A live session of alice's, which hand-made tokens name (a token without a live session is refused). */
let aliceSid: string;

beforeAll(async () => {
  t = await buildTestApp({ clock });
  alice = await seedUser(t, 'alice', 'alice-pass-1');
  bob = await seedUser(t, 'bob', 'bob-pass-1');
});
afterAll(() => t.close());

const me = (token: string) => t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(token) });

async function expectUnauthorized(token: string) {
  const res = await me(token);
  expect(res.statusCode, res.body).toBe(401);
  expect(res.json()).toMatchObject({ code: 'UNAUTHORIZED', request_id: res.headers['x-request-id'], error: expect.any(String) });
}

const b64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;

/** A JWT built by hand: HS256 over base64url(header).base64url(payload), or no signature at all. */
function craft(header: object, payload: object, secret?: Buffer): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${secret ? createHmac('sha256', secret).update(input).digest('base64url') : ''}`;
}

/** Claims a genuine access token for this user would carry right now. */
function claimsFor(id: number, username: string) {
  const iat = Math.floor(clock.now().getTime() / 1000);
  return { sub: String(id), username, typ: 'access', ver: 0, sid: aliceSid, iat, exp: iat + 3600 };
}

/** Signed with the server's own key (the app's @fastify/jwt instance), on the fake clock. */
const serverSigned = (claims: object, algorithm: 'HS256' | 'HS512' = 'HS256') =>
  t.app.jwt.sign(claims, { algorithm, clockTimestamp: clock.now().getTime() });

describe('token expiry (8 h)', () => {
  it('accepts a token one second before 8 h and refuses it one second after', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'alice', password: 'alice-pass-1' } });
    expect(res.statusCode, res.body).toBe(200);
    const { token, expires_at } = res.json() as { token: string; expires_at: string };
    expect(expires_at).toBe(new Date(clock.now().getTime() + 8 * HOUR).toISOString());

    await clock.advance(8 * HOUR - 1000);
    expect((await me(token)).statusCode).toBe(200);
    await clock.advance(2000);
    await expectUnauthorized(token);
  });
});

describe('forged and altered tokens', () => {
  beforeAll(async () => {
    aliceSid = decode((await login(t.app, 'alice', 'alice-pass-1')).split('.')[1]!).sid as string;
  });

  it('accepts the same claims when the server signed them (the control for the cases below)', async () => {
    const res = await me(serverSigned(claimsFor(alice, 'alice')));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: alice, username: 'alice' });
  });

  it('refuses a token signed with another secret', async () => {
    await expectUnauthorized(craft({ alg: 'HS256', typ: 'JWT' }, claimsFor(alice, 'alice'), randomBytes(32)));
  });

  it('refuses an unsigned token (alg none)', async () => {
    await expectUnauthorized(craft({ alg: 'none', typ: 'JWT' }, claimsFor(alice, 'alice')));
    await expectUnauthorized(craft({ alg: 'none' }, claimsFor(alice, 'alice')).slice(0, -1));
  });

  it('refuses a token signed by the server with another algorithm than HS256', async () => {
    const token = serverSigned(claimsFor(alice, 'alice'), 'HS512');
    expect(decode(token.split('.')[0]!)).toMatchObject({ alg: 'HS512' });
    await expectUnauthorized(token);
  });

  it('refuses a real token whose payload was changed to another user', async () => {
    const token = await login(t.app, 'alice', 'alice-pass-1');
    expect((await me(token)).statusCode).toBe(200);
    expect((await me(await login(t.app, 'bob', 'bob-pass-1'))).statusCode).toBe(200);
    const [header, payload, signature] = token.split('.');
    const tampered = { ...decode(payload!), sub: String(bob), username: 'bob' };
    await expectUnauthorized(`${header}.${b64url(tampered)}.${signature}`);
  });

  it('refuses a real token whose typ was changed, re-signed or not', async () => {
    const token = await login(t.app, 'alice', 'alice-pass-1');
    const [header, payload, signature] = token.split('.');
    const claims = decode(payload!);
    expect(claims).toMatchObject({ sub: String(alice), username: 'alice', typ: 'access', ver: 0 });
    await expectUnauthorized(`${header}.${b64url({ ...claims, typ: '2fa_pending' })}.${signature}`);
    // Even with a valid signature only typ "access" is an access token.
    for (const typ of ['2fa_pending', 'refresh', undefined]) await expectUnauthorized(serverSigned({ ...claims, typ }));
  });

  it('refuses a server-signed token whose ver is not the user’s current token version', async () => {
    await expectUnauthorized(serverSigned({ ...claimsFor(alice, 'alice'), ver: 1 }));
    await expectUnauthorized(serverSigned({ ...claimsFor(alice, 'alice'), ver: '0' }));
  });
});

describe('GET /auth/me', () => {
  it('describes the signed-in user with id, username, totp_enabled, created_at, role, customers and session', async () => {
    const token = await login(t.app, 'bob', 'bob-pass-1');
    const res = await me(token);
    expect(res.statusCode, res.body).toBe(200);
    const row = await t.db.db.selectFrom('users').select('created_at').where('id', '=', bob).executeTakeFirstOrThrow();
    const sid = decode(token.split('.')[1]!).sid;
    expect(res.json()).toEqual({ id: bob, username: 'bob', totp_enabled: false, created_at: row.created_at.toISOString(), role: 'admin', customer_ids: null, session_id: sid });
  });

  it('describes an API key with exactly id, name, permissions and customer_id', async () => {
    const token = await login(t.app, 'alice', 'alice-pass-1');
    const headers = bearer(token);
    const customer = await createCustomer(t.app, token, '7001');
    const unscoped = await createKey(t.app, headers, 'read');
    const scoped = await createKey(t.app, headers, 'write', customer.id);
    for (const [key, permissions, customer_id] of [[unscoped, 'read', null], [scoped, 'write', customer.id]] as const) {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: apiKey(key.key) });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ api_key: { id: key.id, name: `${permissions} key`, permissions, customer_id } });
    }
  });
});
