// Password sign-in throttling (issue 57, item 4; NIST SP 800-63B §5.2.2): failures count per
// (username, address), per address across usernames, and per username as a high ceiling, with waits
// that grow instead of a lock a stranger can set off. The right password from the user's own address
// works whatever others tried from elsewhere; an address spraying usernames is stopped; concurrent
// guesses cannot slip under the limit; a passkey signs in while the password is throttled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServerApp } from '../src/apps/server/build-app.js';
import { FakeClock } from '../src/platform/clock.js';
import { createLogger } from '../src/platform/logger.js';
import { buildTestApp, testSecrets, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, bearer, seedUser } from './helpers/identity.js';
import { SoftAuthenticator, type CreationOptions, type RequestOptions } from './helpers/soft-authenticator.js';

const ORIGIN = 'http://localhost';
const clock = new FakeClock('2026-11-30T09:00:00Z');
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ clock, env: { PUBLIC_URL: ORIGIN } }); // passkeys are made only with PUBLIC_URL set
});
afterAll(() => t.close());

const attempt = (username: string, password: string, from: string) =>
  t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password }, remoteAddress: from });

async function failures(username: string, from: string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await attempt(username, `wrong-${i}`, from)).statusCode);
  return statuses;
}

const ok = 200;
const wrong = 401;
const waiting = 429;

describe('one username from one address', () => {
  it("does not stop the right password from the user's own address after a stranger's failures elsewhere", async () => {
    await seedUser(t, 'lena', 'lena-password-1');
    expect(await failures('lena', '203.0.113.5', 12)).toEqual([...Array<number>(10).fill(wrong), waiting, waiting]);
    expect((await attempt('lena', 'lena-password-1', '198.51.100.20')).statusCode).toBe(ok);
    // The stranger's address still waits, even with the right password (it must not learn it is right).
    expectError(await attempt('lena', 'lena-password-1', '203.0.113.5'), 429, 'TOO_MANY_ATTEMPTS');
  });

  it('makes each wait after the tenth failure twice as long as the one before', async () => {
    await seedUser(t, 'mats', 'mats-password-1');
    expect(await failures('mats', '203.0.113.6', 10)).toEqual(Array<number>(10).fill(wrong));
    const waits: string[] = [];
    for (let round = 0; round < 4; round++) {
      const refused = await attempt('mats', 'mats-password-1', '203.0.113.6');
      expectError(refused, 429, 'TOO_MANY_ATTEMPTS');
      waits.push(String(refused.headers['retry-after']));
      await clock.advance(Number(refused.headers['retry-after']) * 1000);
      expect(await failures('mats', '203.0.113.6', 1)).toEqual([wrong]);
    }
    expect(waits).toEqual(['60', '120', '240', '480']);
  });

  it('starts the count again after the right password', async () => {
    await seedUser(t, 'nils', 'nils-password-1');
    for (let round = 0; round < 3; round++) {
      expect(await failures('nils', '203.0.113.7', 9)).toEqual(Array<number>(9).fill(wrong));
      expect((await attempt('nils', 'nils-password-1', '203.0.113.7')).statusCode).toBe(ok);
    }
  });

  it('lets no more than 10 of 20 concurrent wrong passwords be checked', async () => {
    await seedUser(t, 'olga', 'olga-password-1');
    const statuses = (await Promise.all(Array.from({ length: 20 }, (_, i) => attempt('olga', `wrong-${i}`, '203.0.113.8')))).map((r) => r.statusCode);
    expect(statuses.filter((s) => s === wrong)).toHaveLength(10);
    expect(statuses.filter((s) => s === waiting)).toHaveLength(10);
  });
});

describe('one address across usernames (password spraying)', () => {
  it('stops an address after 50 failures over any usernames, with a growing wait; other addresses carry on', async () => {
    await seedUser(t, 'paul', 'paul-password-1');
    const sprayed = [];
    for (let i = 0; i < 50; i++) sprayed.push((await attempt(`user-${i}`, 'Summer2026!', '192.0.2.33')).statusCode);
    expect(sprayed).toEqual(Array<number>(50).fill(wrong));
    const refused = await attempt('user-50', 'Summer2026!', '192.0.2.33');
    expectError(refused, 429, 'TOO_MANY_ATTEMPTS');
    expect(refused.headers['retry-after']).toBe('60');
    expect((await attempt('paul', 'paul-password-1', '192.0.2.34')).statusCode).toBe(ok);

    await clock.advance(60_000);
    expect((await attempt('user-51', 'Summer2026!', '192.0.2.33')).statusCode).toBe(wrong);
    expect((await attempt('user-52', 'Summer2026!', '192.0.2.33')).headers['retry-after']).toBe('120');
  });
});

describe('one username across addresses (the ceiling)', () => {
  it('after 100 failures refuses new addresses, but not one the user signed in from, and the right password lifts it', async () => {
    await seedUser(t, 'rita', 'rita-password-1');
    expect((await attempt('rita', 'rita-password-1', '198.51.100.50')).statusCode).toBe(ok);
    for (let net = 0; net < 10; net++) expect(await failures('rita', `10.9.${net}.1`, 10)).toEqual(Array<number>(10).fill(wrong));

    const refused = expectError(await attempt('rita', 'rita-password-1', '10.8.0.1'), 429, 'TOO_MANY_ATTEMPTS');
    expect(refused.error).toMatch(/passkey/);
    expect((await attempt('rita', 'rita-password-1', '198.51.100.50')).statusCode).toBe(ok);
    expect((await attempt('rita', 'rita-password-1', '10.8.0.1')).statusCode).toBe(ok);
  });
});

describe('a cluster', () => {
  it("shares the counts: another instance on the same database makes the same address wait", async () => {
    await seedUser(t, 'tove', 'tove-password-1');
    const other = await buildServerApp({ config: t.config, db: t.db, logger: createLogger({ level: 'silent' }), secrets: testSecrets(), clock, bcryptRounds: 4, backgroundJobs: false });
    try {
      expect(await failures('tove', '203.0.113.44', 10)).toEqual(Array<number>(10).fill(wrong));
      const there = await other.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'tove', password: 'tove-password-1' }, remoteAddress: '203.0.113.44' });
      expectError(there, 429, 'TOO_MANY_ATTEMPTS');
    } finally {
      await other.close();
    }
  });
});

describe('other ways to sign in', () => {
  it('signs in with a passkey while the password is throttled', async () => {
    const admin = await adminToken(t);
    await seedUser(t, 'sven', 'sven-password-1');
    const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'POST', url: `/api/v1${url}`, headers: { origin: ORIGIN, ...headers }, payload, remoteAddress: '203.0.113.99' });
    const sven = (await post('/auth/login', { username: 'sven', password: 'sven-password-1' })).json<{ token: string }>().token;
    const key = new SoftAuthenticator(ORIGIN);
    const creation = await post('/auth/passkeys/registration-options', {}, bearer(sven));
    expect((await post('/auth/passkeys', { name: 'Phone', response: key.register(creation.json<CreationOptions>()) }, bearer(sven))).statusCode).toBe(201);
    expect((await t.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: bearer(admin), payload: { passwordless_login: true } })).statusCode).toBe(200);

    expect(await failures('sven', '203.0.113.99', 10)).toEqual(Array<number>(10).fill(wrong));
    expectError(await attempt('sven', 'sven-password-1', '203.0.113.99'), 429, 'TOO_MANY_ATTEMPTS');
    const options = await post('/auth/passkey-options', {});
    const res = await post('/auth/passkey-login', { response: key.assert(options.json<RequestOptions>()) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ user: { username: 'sven' } });
  });
});

describe('what is stored', () => {
  it('keeps a count only while it has something to remember, and where the user signed in', async () => {
    const before = await t.db.db.selectFrom('login_throttle').select('username').execute();
    expect(before.length).toBeGreaterThan(100); // the spray's made-up usernames among them
    await clock.advance(24 * 3600_000);
    expect((await attempt('someone-new', 'guess', '192.0.2.200')).statusCode).toBe(wrong);
    const rows = await t.db.db.selectFrom('login_throttle').selectAll().execute();
    const left = rows.filter((r) => r.succeeded_at === null).map((r) => `${r.username}@${r.address}`);
    expect(left.sort()).toEqual(['@192.0.2.200', 'someone-new@', 'someone-new@192.0.2.200']);
    expect(rows.filter((r) => r.succeeded_at !== null).map((r) => r.username)).toContain('lena');
  });
});
