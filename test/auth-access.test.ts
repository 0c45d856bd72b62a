// Who may call what (contract §1): every registered route is walked with each kind of caller, so a
// route added later without the right access declaration fails here. Also: how credentials travel
// (header or query), and that user management and 2FA need a signed-in user, never a key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createKey, login, seedUser, type Permission } from './helpers/identity.js';
import { expectError } from './helpers/assertions.js';

let t: TestApp;
let token: string;
const keys = {} as Record<Permission, { id: number; key: string }>;

beforeAll(async () => {
  t = await buildTestApp();
  token = await adminToken(t);
  for (const p of ['agent', 'read', 'write', 'admin'] as const) keys[p] = await createKey(t.app, bearer(token), p);
});
afterAll(() => t.close());

type Route = { method: string; url: string; access: string | undefined };

const routes = (): Route[] => t.app.declaredRoutes.filter((r) => !r.hidden && r.method !== 'HEAD');
const label = (r: Route) => `${r.method} ${r.url}`;
/** A URL for the route: `1` for every path parameter; the agent socket also needs its agent_id (an unknown one). */
const concrete = (url: string) => url.replace(/:[^/]+/g, '1') + (url.endsWith('/agent/ws') ? '?agent_id=00000000000000aa' : '');

// The contract's lists, written out by path so that a wrong declaration on a route is caught.
// GET /metrics takes no API credentials: it has its own guard (METRICS_TOKEN, else this machine only).
const NO_CREDENTIALS = ['POST /api/v1/auth/login', 'POST /api/v1/auth/2fa/validate', 'POST /api/v1/auth/2fa/passkey-options', 'POST /api/v1/auth/2fa/passkey', 'GET /api/v1/auth/passkey-login', 'POST /api/v1/auth/passkey-options', 'POST /api/v1/auth/passkey-login', 'GET /api/v1/auth/sso/providers', 'GET /api/v1/auth/sso/:id/start', 'GET /api/v1/auth/sso/:id/callback', 'POST /api/v1/auth/sso/exchange', 'GET /healthz', 'GET /readyz', 'GET /api/v1/openapi.json', 'GET /metrics'];
/** Registering an agent is the agent's act (issue 57): agent keys only, every other key and every user 403. */
const AGENT_KEY_ONLY = [/^POST \/api\/v1\/agent\/register$/];
const AGENT_KEY = [
  /^GET \/api\/v1\/agent\/ws$/,
  ...AGENT_KEY_ONLY,
  /^POST \/api\/v1\/agent\/heartbeat$/,
  /^GET \/api\/v1\/firmware(\/latest|\/download)?$/,
  /^GET \/api\/v1\/installer\/download$/,
  /^GET \/api\/v1\/install\/agent\.(sh|ps1)$/,
  /^GET \/api\/v1\/agents\/:[^/]+$/,
  /^DELETE \/api\/v1\/agents\/:[^/]+\/request-update$/,
  /^POST \/api\/v1\/agents\/:[^/]+\/updater-report$/,
  /^GET \/api\/v1\/customers\/:[^/]+\/wau\/(included|excluded)(_apps\.txt)?$/,
];
/** The terminal and its status (a real login only, §11: keys 401). */
const TERMINAL = /^GET \/api\/v1\/terminal(\/status)?$/;
/** A user's own passkeys (issue 35): signed-in users only. */
const PASSKEYS = /^[A-Z]+ \/api\/v1\/auth\/passkeys(\/.*)?$/;
/** Single sign-on management: like managing users, for signed-in admins only (keys 403). */
const SSO_ADMIN = /^(GET|POST|PUT|DELETE) \/api\/v1\/sso\//;
const USERS_ONLY = [
  SSO_ADMIN,
  /^(POST \/api\/v1\/users|PUT \/api\/v1\/users\/:[^/]+\/password|(DELETE|PATCH) \/api\/v1\/users\/:[^/]+)$/,
  /^(GET|DELETE) \/api\/v1\/users\/:[^/]+\/sessions$/,
  /^POST \/api\/v1\/auth\/(2fa\/(setup|confirm|disable)|logout)$/,
  /^(GET \/api\/v1\/auth\/sessions|DELETE \/api\/v1\/auth\/sessions\/:[^/]+)$/,
  TERMINAL,
  PASSKEYS,
  // A remote desktop is bound to the sign-in session that opens it (issue 60): keys never open one.
  /^POST \/api\/v1\/agents\/:id\/desktop$/,
];
/** GETs a read key may not call besides the users-only ones: the terminal, the agent socket (§1) and the tunnel proxy socket (§8: write/admin). */
const NOT_FOR_READ_KEYS = [TERMINAL, /^GET \/api\/v1\/agent\/ws$/, /^GET \/api\/v1\/proxy\/:[^/]+$/, /^GET \/api\/v1\/agents\/:id\/shell$/, /^GET \/api\/v1\/device-sessions\/:id\/recording$/, /^GET \/api\/v1\/agents\/:id\/rdp\/:tid\/file$/];
/** Routes for admins only (issue 59: a device shell's recording, what a technician did on a customer's machine). */
const ADMIN_ONLY = [/^GET \/api\/v1\/device-sessions\/:id\/recording$/];
const matches = (r: Route, patterns: RegExp[]) => patterns.some((p) => p.test(label(r)));
/** What a key gets where it may not go: 401 at the terminal (a real login only, §11), 403 anywhere else. */
const refusal = (r: Route) => `${label(r)} → ${TERMINAL.test(label(r)) ? '401 UNAUTHORIZED' : '403 FORBIDDEN'}`;

/**
 * One request to a route with the given credentials. Writes carry a body of an unknown content type:
 * authentication and authorization run before body parsing, so an allowed write stops at 415 without
 * changing anything, and a refused one answers 401/403 first.
 */
function probe(r: Route, headers: Record<string, string>) {
  const url = concrete(r.url);
  if (r.method === 'GET') return t.app.inject({ method: 'GET', url, headers });
  return t.app.inject({
    method: r.method as 'POST',
    url,
    headers: { ...headers, 'content-type': 'application/x-unknown' },
    payload: 'x',
  });
}

/** "<route> → <status> <code>" per route, so a failure names every offending route at once. */
async function walk(list: Route[], headers: Record<string, string>) {
  const out: string[] = [];
  for (const r of list) {
    const res = await probe(r, headers);
    const code = res.statusCode >= 400 ? (res.json() as { code?: string }).code : '';
    out.push(`${label(r)} → ${res.statusCode} ${code}`.trim());
  }
  return out;
}
const refused = (lines: string[]) => lines.filter((l) => /→ (401|403)/.test(l));
/** Lines where an expected 'allowed' came true collapse to 'allowed'; anything else stays as answered. */
const against = (lines: string[], expected: string[]) =>
  lines.map((l, i) => (expected[i] === 'allowed' && !/→ (401|403)/.test(l) ? 'allowed' : l));

describe('missing or bad credentials', () => {
  it('answers every non-public route with 401 UNAUTHORIZED in the contract error body', async () => {
    const closed = routes().filter((r) => r.access !== 'public');
    expect(closed.map(label)).toContain('GET /api/v1/customers');
    expect(await walk(closed, {})).toEqual(closed.map((r) => `${label(r)} → 401 UNAUTHORIZED`));
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/customers' }), 401, 'UNAUTHORIZED');
  });

  it('declares exactly the contract list as public and lets each through', async () => {
    const open = routes().filter((r) => r.access === 'public');
    expect(open.map(label).sort()).toEqual([...NO_CREDENTIALS].sort());
    for (const r of open) {
      const res = await t.app.inject({ method: r.method as 'GET', url: r.url });
      expect(res.statusCode, label(r)).not.toBe(401);
    }
    expect((await t.app.inject({ method: 'GET', url: '/docs' })).statusCode).not.toBe(401);
  });

  it('answers an empty or wrong key and a malformed Authorization header with 401', async () => {
    const attempts: Array<{ url: string; headers?: Record<string, string> }> = [
      { url: '/api/v1/customers?api_key=' },
      // An empty key is a failed attempt with a key, even next to a valid token.
      { url: '/api/v1/customers?api_key=', headers: bearer(token) },
      { url: `/api/v1/customers?api_key=${keys.admin.key}x` },
      { url: '/api/v1/customers', headers: apiKey('rmm_0000000000000000000000000000000000') },
      { url: '/api/v1/customers', headers: apiKey('') },
      { url: '/api/v1/customers', headers: { authorization: `Basic ${Buffer.from('admin:x').toString('base64')}` } },
      { url: '/api/v1/customers', headers: { authorization: 'Bearer' } },
      { url: '/api/v1/customers', headers: { authorization: `Bearer ${token} extra` } },
      { url: '/api/v1/customers', headers: { authorization: `Token ${token}` } },
      { url: '/api/v1/customers', headers: bearer('not.a.jwt') },
      { url: '/api/v1/customers?token=' },
    ];
    for (const a of attempts) {
      const res = await t.app.inject({ method: 'GET', url: a.url, headers: a.headers });
      expect(res.statusCode, JSON.stringify(a)).toBe(401);
      expectError(res, 401, 'UNAUTHORIZED');
    }
  });
});

describe('read key', () => {
  it('may call every GET (GET /customers answers 200)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/customers', headers: apiKey(keys.read.key) });
    expect(res.statusCode, res.body).toBe(200);
    const gets = routes().filter((r) => r.method === 'GET' && r.access !== 'public');
    const notForKeys = (r: Route) => matches(r, NOT_FOR_READ_KEYS) || matches(r, USERS_ONLY);
    const allowed = gets.filter((r) => !notForKeys(r));
    expect(refused(await walk(allowed, apiKey(keys.read.key)))).toEqual([]);
    const denied = gets.filter(notForKeys);
    expect(await walk(denied, apiKey(keys.read.key))).toEqual(denied.map(refusal));
    expect(denied).toHaveLength(13); // with GET /terminal/status (issue 56), the device shell and its recordings (issue 59), an RDP tunnel's file (issue 60)
  });

  it('is refused every POST, PUT and DELETE with 403 FORBIDDEN', async () => {
    const writes = routes().filter((r) => r.method !== 'GET' && r.access !== 'public');
    expect(writes.length).toBeGreaterThan(5);
    expect(await walk(writes, apiKey(keys.read.key))).toEqual(writes.map((r) => `${label(r)} → 403 FORBIDDEN`));
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/customers', headers: apiKey(keys.read.key), payload: { number: 'R1', name: 'R' } });
    expectError(res, 403, 'FORBIDDEN');
    expect(await t.db.db.selectFrom('customers').select('id').where('number', '=', 'R1').execute()).toEqual([]);
  });
});

describe('agent key', () => {
  it('is refused operator routes with 403 FORBIDDEN', async () => {
    for (const [method, url] of [['GET', '/customers'], ['GET', '/apikeys'], ['POST', '/customers']] as const) {
      const res = await t.app.inject({ method, url: `/api/v1${url}`, headers: apiKey(keys.agent.key), payload: method === 'POST' ? { number: 'A1', name: 'A' } : undefined });
      expectError(res, 403, 'FORBIDDEN');
    }
    expect(await t.db.db.selectFrom('customers').select('id').where('number', '=', 'A1').execute()).toEqual([]);
  });

  it('may call only the agent routes of the contract; every other route answers 403', async () => {
    const closed = routes().filter((r) => r.access !== 'public');
    const lines = await walk(closed, apiKey(keys.agent.key));
    const expected = closed.map((r) => (matches(r, AGENT_KEY) ? 'allowed' : refusal(r)));
    expect(against(lines, expected)).toEqual(expected);
  });
});

describe('write and admin keys', () => {
  it('a write key cannot create an admin key (403) but can create write and read keys (201)', async () => {
    const headers = apiKey(keys.write.key);
    const denied = await t.app.inject({ method: 'POST', url: '/api/v1/apikeys', headers, payload: { name: 'escalate', permissions: 'admin' } });
    expectError(denied, 403, 'FORBIDDEN');
    expect(await t.db.db.selectFrom('api_keys').select('id').where('name', '=', 'escalate').execute()).toEqual([]);
    for (const p of ['write', 'read'] as const) {
      const created = await createKey(t.app, headers, p);
      expect(created.permissions).toBe(p);
      const me = await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: apiKey(created.key) });
      expect(me.json()).toMatchObject({ api_key: { id: created.id, permissions: p } });
    }
  });

  it.each(['write', 'admin'] as const)('a key with permission %s may call everything except user management, 2FA, the terminal and registering an agent', async (p) => {
    const closed = routes().filter((r) => r.access !== 'public');
    const lines = await walk(closed, apiKey(keys[p].key));
    const expected = closed.map((r) => (matches(r, USERS_ONLY) || matches(r, AGENT_KEY_ONLY) || (p === 'write' && matches(r, ADMIN_ONLY)) ? refusal(r) : 'allowed'));
    expect(against(lines, expected)).toEqual(expected);
  });
});

describe('user management and two-factor settings', () => {
  it.each(['read', 'write', 'admin'] as const)('refuse a key with permission %s with 403 and change nothing', async (p) => {
    const victim = await seedUser(t, `victim-${p}`, 'victim-pass-1');
    const before = await t.db.db.selectFrom('users').selectAll().where('id', '=', victim).executeTakeFirstOrThrow();
    const headers = apiKey(keys[p].key);
    const calls = [
      { method: 'POST', url: '/users', payload: { username: `minted-${p}`, password: 'minted-pass-1' } },
      { method: 'PUT', url: `/users/${victim}/password`, payload: { password: 'changed-pass-1' } },
      { method: 'DELETE', url: `/users/${victim}` },
      { method: 'POST', url: '/auth/2fa/setup', payload: {} },
      { method: 'POST', url: '/auth/logout', payload: {} },
    ] as const;
    for (const c of calls) {
      const res = await t.app.inject({ method: c.method, url: `/api/v1${c.url}`, headers, payload: 'payload' in c ? c.payload : undefined });
      expectError(res, 403, 'FORBIDDEN');
    }
    expect(await t.db.db.selectFrom('users').selectAll().where('id', '=', victim).executeTakeFirstOrThrow()).toEqual(before);
    expect(await t.db.db.selectFrom('users').select('id').where('username', '=', `minted-${p}`).execute()).toEqual([]);
  });

  it('allow a signed-in user', async () => {
    const headers = bearer(token);
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/users', headers, payload: { username: 'carol', password: 'carol-pass-1' } });
    expect(created.statusCode, created.body).toBe(201);
    const carol = (created.json() as { id: number }).id;
    const changed = await t.app.inject({ method: 'PUT', url: `/api/v1/users/${carol}/password`, headers, payload: { password: 'carol-pass-2' } });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toEqual({ ok: true });
    await login(t.app, 'carol', 'carol-pass-2');
    const deleted = await t.app.inject({ method: 'DELETE', url: `/api/v1/users/${carol}`, headers });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(await t.db.db.selectFrom('users').select('id').where('id', '=', carol).execute()).toEqual([]);

    const setup = await t.app.inject({ method: 'POST', url: '/api/v1/auth/2fa/setup', headers, payload: {} });
    expect(setup.statusCode, setup.body).toBe(200);
    expect(setup.json()).toMatchObject({ secret: expect.any(String), otpauth_url: expect.stringMatching(/^otpauth:\/\//) });

    // Logout ends the user's sessions, so it gets a user of its own.
    await seedUser(t, 'leaver', 'leaver-pass-1');
    const leaver = await login(t.app, 'leaver', 'leaver-pass-1');
    const out = await t.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(leaver), payload: {} });
    expect(out.statusCode, out.body).toBe(200);
    expect(out.json()).toEqual({ ok: true });
  });
});

describe('a signed-in user (JWT)', () => {
  it('may call every route but registering an agent (403: agent keys only)', async () => {
    const closed = routes().filter((r) => r.access !== 'public');
    expect(refused(await walk(closed, bearer(token)))).toEqual(closed.filter((r) => matches(r, AGENT_KEY_ONLY)).map(refusal));
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/users', headers: bearer(token) });
    expect(res.statusCode, res.body).toBe(200);
  });
});

describe('credential transport', () => {
  it('accepts an API key in the X-API-Key header and in the api_key query', async () => {
    const expected = { api_key: { id: keys.write.id, name: 'write key', permissions: 'write', customer_id: null } };
    const viaHeader = await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: apiKey(keys.write.key) });
    const viaQuery = await t.app.inject({ method: 'GET', url: `/api/v1/auth/me?api_key=${keys.write.key}` });
    expect([viaHeader.statusCode, viaQuery.statusCode]).toEqual([200, 200]);
    expect(viaHeader.json()).toEqual(expected);
    expect(viaQuery.json()).toEqual(expected);
  });

  it('accepts a JWT as Authorization: Bearer and in the token query', async () => {
    const viaHeader = await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(token) });
    const viaQuery = await t.app.inject({ method: 'GET', url: `/api/v1/auth/me?token=${token}` });
    expect([viaHeader.statusCode, viaQuery.statusCode]).toEqual([200, 200]);
    expect(viaHeader.json()).toMatchObject({ username: 'admin' });
    expect(viaQuery.json()).toEqual(viaHeader.json());
  });
});
