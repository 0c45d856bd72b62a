// No password, API key, TOTP secret or code, webhook secret or token leaks: every flow that handles one
// runs against a log-capturing app, and then every log line, the audit log and every response body is
// searched for every secret. Keys, the TOTP secret and tokens may appear only in the one response that
// hands them out (contract §1 and §10).
import type { InjectOptions } from 'fastify';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { apiKey, bearer, seedUser } from './helpers/identity.js';

interface Recorded {
  label: string;
  body: string;
}

const clock = new FakeClock('2026-04-01T09:00:00Z');
let t: TestApp;
const responses: Recorded[] = [];

const passwords = {
  admin: 'Adm1n-pass-Quokka',
  wrong: 'Wr0ng-guess-Ibis',
  carolFirst: 'Car0l-first-Heron',
  carolSecond: 'Car0l-second-Egret',
  tooLong: `Rejected-${'z'.repeat(64)}`, // 73 bytes: over the limit, refused
};
const webhookSecret = 'whsec-Narwhal-7f3a9c2e-0b1d';

// Filled in by the flows below.
const keys: { key: string; issuedAt: number }[] = [];
const tokens: { token: string; issuedAt: number }[] = [];
const codes: string[] = [];
let totpSecret = '';
let setupAt = -1;
let auditBody = '';

type Request = InjectOptions & { method: 'GET' | 'POST' | 'PUT'; url: string };

/** Injects a request and keeps its response body; returns the response and its index. */
async function call(options: Request) {
  const res = await t.app.inject(options);
  responses.push({ label: `${options.method} ${options.url.split('?')[0]} → ${res.statusCode}`, body: res.body });
  return { res, index: responses.length - 1 };
}

const totpCode = async () => {
  const code = await generate({ secret: totpSecret, epoch: Math.floor(clock.now().getTime() / 1000) });
  codes.push(code);
  return code;
};

async function loginFor(username: string, password: string) {
  const { res, index } = await call({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password } });
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json() as { token?: string; pending_token?: string };
  const token = body.token ?? body.pending_token!;
  tokens.push({ token, issuedAt: index });
  return token;
}

async function expectStatus(status: number, options: Request) {
  const { res, index } = await call(options);
  expect(res.statusCode, `${options.method} ${options.url}: ${res.body}`).toBe(status);
  return { res, index };
}

beforeAll(async () => {
  t = await buildTestApp({ captureLogs: true, clock });

  // Passwords: login, a failed login, a new user, a password change, a refused too-long password.
  await seedUser(t, 'admin', passwords.admin);
  const admin = await loginFor('admin', passwords.admin);
  await expectStatus(401, { method: 'POST', url: '/api/v1/auth/login', payload: { username: 'admin', password: passwords.wrong } });
  const created = await expectStatus(201, {
    method: 'POST',
    url: '/api/v1/users',
    headers: bearer(admin),
    payload: { username: 'carol', password: passwords.carolFirst },
  });
  const carol = created.res.json() as { id: number };
  const carolPassword = `/api/v1/users/${carol.id}/password`;
  await expectStatus(200, { method: 'PUT', url: carolPassword, headers: bearer(admin), payload: { password: passwords.carolSecond } });
  await expectStatus(400, { method: 'PUT', url: carolPassword, headers: bearer(admin), payload: { password: passwords.tooLong } });

  // A JWT in the `token` query, as WebSocket clients send it.
  const carolToken = await loginFor('carol', passwords.carolSecond);
  await expectStatus(200, { method: 'GET', url: `/api/v1/auth/me?token=${carolToken}` });
  await expectStatus(201, { method: 'POST', url: `/api/v1/customers?token=${carolToken}`, payload: { number: '501', name: 'Via token' } });

  // API keys, used in the header and in the `api_key` query.
  for (const permissions of ['write', 'agent'] as const) {
    const { res, index } = await expectStatus(201, {
      method: 'POST',
      url: '/api/v1/apikeys',
      headers: bearer(admin),
      payload: { name: `${permissions} key`, permissions },
    });
    keys.push({ key: (res.json() as { key: string }).key, issuedAt: index });
  }
  const writeKey = keys[0]!.key;
  const agentKey = keys[1]!.key;
  const viaHeader = { number: '502', name: 'Via header' };
  await expectStatus(201, { method: 'POST', url: '/api/v1/customers', headers: apiKey(writeKey), payload: viaHeader });
  await expectStatus(200, { method: 'GET', url: '/api/v1/customers', headers: apiKey(writeKey) });
  await expectStatus(200, { method: 'GET', url: `/api/v1/customers?api_key=${writeKey}` });
  await expectStatus(201, { method: 'POST', url: `/api/v1/customers?api_key=${writeKey}`, payload: { number: '503', name: 'Via query' } });

  // TOTP: enrol, sign in with a pending token (one wrong code first), use the new JWT, disable.
  const setup = await expectStatus(200, { method: 'POST', url: '/api/v1/auth/2fa/setup', headers: bearer(admin), payload: {} });
  totpSecret = (setup.res.json() as { secret: string }).secret;
  setupAt = setup.index;
  await expectStatus(200, { method: 'POST', url: '/api/v1/auth/2fa/confirm', headers: bearer(admin), payload: { code: await totpCode() } });
  await clock.advance(30_000);
  const pending = await loginFor('admin', passwords.admin);
  const wrongCode = await generate({ secret: totpSecret, epoch: Math.floor(clock.now().getTime() / 1000) + 3600 });
  codes.push(wrongCode);
  await expectStatus(401, { method: 'POST', url: '/api/v1/auth/2fa/validate', payload: { pending_token: pending, code: wrongCode } });
  const validated = await expectStatus(200, {
    method: 'POST',
    url: '/api/v1/auth/2fa/validate',
    payload: { pending_token: pending, code: await totpCode() },
  });
  const admin2fa = (validated.res.json() as { token: string }).token;
  tokens.push({ token: admin2fa, issuedAt: validated.index });
  await expectStatus(200, { method: 'GET', url: `/api/v1/auth/me?token=${admin2fa}` });
  await clock.advance(30_000);
  await expectStatus(200, {
    method: 'POST',
    url: '/api/v1/auth/2fa/disable',
    headers: bearer(admin2fa),
    payload: { password: passwords.admin, code: await totpCode() },
  });

  // Settings holding secrets, then every list that could show one.
  const admin3 = await loginFor('admin', passwords.admin);
  await expectStatus(200, {
    method: 'PUT',
    url: '/api/v1/settings',
    headers: bearer(admin3),
    payload: { installer_api_key: agentKey, webhook_secret: webhookSecret },
  });
  for (const url of ['/api/v1/settings', '/api/v1/apikeys', '/api/v1/users', '/api/v1/auth/me']) {
    await expectStatus(200, { method: 'GET', url, headers: bearer(admin3) });
  }
  auditBody = (await expectStatus(200, { method: 'GET', url: '/api/v1/audit?limit=1000', headers: bearer(admin3) })).res.body;
});
afterAll(() => t.close());

// A 6-digit code could occur by chance inside a longer number or random string (a log timestamp, a
// token), so a code counts as present only as a whole token.
const containsCode = (text: string, code: string) => new RegExp(`(?<![\\w.])${code}(?!\\w)`).test(text);

function allSecrets(): { name: string; found(text: string): boolean }[] {
  const plain = (name: string, value: string) => ({ name, found: (text: string) => text.includes(value) });
  return [
    ...Object.entries(passwords).map(([name, value]) => plain(`password ${name}`, value)),
    ...keys.map((k, i) => plain(`api key ${i}`, k.key)),
    ...tokens.map((tk, i) => plain(`token ${i}`, tk.token)),
    ...codes.map((code, i) => ({ name: `code ${i}`, found: (text: string) => containsCode(text, code) })),
    plain('totp secret', totpSecret),
    plain('webhook secret', webhookSecret),
  ];
}

/** Labels of the responses whose body contains the value. */
const responsesWith = (value: string) => responses.filter((r) => r.body.includes(value)).map((r) => r.label);

describe('secrets in the log', () => {
  it('captured the request lines, with credential query parameters redacted', () => {
    const urls = t
      .logs()
      .map((line) => JSON.parse(line) as { req?: { url?: string } })
      .flatMap((line) => (line.req?.url ? [line.req.url] : []));
    expect(urls.length).toBeGreaterThanOrEqual(responses.length);
    expect(urls).toContain('/api/v1/customers?api_key=[redacted]');
    expect(urls).toContain('/api/v1/customers?token=[redacted]');
    expect(urls).toContain('/api/v1/auth/me?token=[redacted]');
    expect(urls).toContain('/api/v1/auth/2fa/validate');
  });

  it('has no password, key, token, TOTP secret, code or webhook secret in any line', () => {
    const secrets = allSecrets();
    expect(secrets.length).toBe(5 + 2 + 5 + 4 + 2);
    const leaks = t.logs().flatMap((line) => secrets.filter((s) => s.found(line)).map((s) => `${s.name}: ${line}`));
    expect(leaks).toEqual([]);
  });
});

describe('secrets in the audit log', () => {
  it('records the flows but none of their secrets', () => {
    const actions = (JSON.parse(auditBody) as { action: string }[]).map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['auth.login', 'auth.login_failed', 'auth.2fa_enabled', 'settings.update']));
    expect(allSecrets().filter((s) => s.found(auditBody)).map((s) => s.name)).toEqual([]);
  });
});

describe('secrets in responses', () => {
  it('never returns a password, a TOTP code or the webhook secret', () => {
    const neverShown = allSecrets().filter((s) => /^(password|code|webhook)/.test(s.name));
    const leaks = responses.flatMap((r) => neverShown.filter((s) => s.found(r.body)).map((s) => `${s.name} in ${r.label}`));
    expect(leaks).toEqual([]);
  });

  it('shows an API key only in the response that created it', () => {
    for (const { key, issuedAt } of keys) {
      expect(responsesWith(key)).toEqual([responses[issuedAt]!.label]);
    }
  });

  it('shows the TOTP secret only in the setup response, inside its otpauth_url too', () => {
    expect(responsesWith(totpSecret)).toEqual([responses[setupAt]!.label]);
    const setup = JSON.parse(responses[setupAt]!.body) as { secret: string; otpauth_url: string };
    expect(setup.otpauth_url).toContain(`secret=${totpSecret}`);
  });

  it('shows each token only in the login or validate response that issued it', () => {
    expect(tokens.length).toBe(5);
    for (const { token, issuedAt } of tokens) {
      expect(responsesWith(token)).toEqual([responses[issuedAt]!.label]);
      expect(responses[issuedAt]!.label).toMatch(/^POST \/api\/v1\/auth\/(login|2fa\/validate) → 200$/);
    }
  });
});
