// The table "Who may call what" (docs/security.md) sets keys and users of the same permission side by side
// (issue 57, item 7). Where they differ it says so, and this checks those rows against the server:
// an unscoped write key changes server settings while a write user may not (nor anyone limited to a
// customer); admin keys are made only by admin keys and admin users; only agent keys register.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createCustomer, createKey, login, seedUser } from './helpers/identity.js';

let t: TestApp;
const callers = {} as Record<string, Record<string, string>>;

beforeAll(async () => {
  t = await buildTestApp();
  const admin = await adminToken(t);
  const customer = await createCustomer(t.app, admin, 'TABLE-1');
  for (const p of ['read', 'write', 'admin'] as const) {
    callers[`${p} key`] = apiKey((await createKey(t.app, bearer(admin), p)).key);
    callers[`${p} key of a customer`] = apiKey((await createKey(t.app, bearer(admin), p, customer.id)).key);
    await seedUser(t, `${p}-user`, `${p}-user-pass`, { role: p });
    await seedUser(t, `${p}-scoped`, `${p}-scoped-pass`, { role: p, customer_ids: [customer.id] });
    callers[`${p} user`] = bearer(await login(t.app, `${p}-user`, `${p}-user-pass`));
    callers[`${p} user of a customer`] = bearer(await login(t.app, `${p}-scoped`, `${p}-scoped-pass`));
  }
  callers['agent key'] = apiKey((await createKey(t.app, bearer(admin), 'agent')).key);
});
afterAll(() => t.close());

const storedBackendUrl = async () =>
  (await t.db.db.selectFrom('settings').select('value').where('key', '=', 'backend_url').executeTakeFirst())?.value ?? null;

describe('server settings (PUT /settings)', () => {
  it.each(['write key', 'admin key', 'admin user'])('a %s without customer scope changes them', async (who) => {
    const url = `https://${who.replace(' ', '-')}.example.com`;
    const res = await t.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: callers[who], payload: { backend_url: url } });
    expect(res.statusCode, res.body).toBe(200);
    expect(await storedBackendUrl()).toBe(url);
  });

  it.each(['write user', 'read user', 'read key', 'agent key', 'write key of a customer', 'admin key of a customer', 'admin user of a customer', 'write user of a customer'])(
    'a %s may not: 403, nothing changed',
    async (who) => {
      const before = await storedBackendUrl();
      expectError(await t.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: callers[who], payload: { backend_url: 'https://changed.example.com' } }), 403, 'FORBIDDEN');
      expect(await storedBackendUrl()).toBe(before);
    },
  );
});

describe('admin keys', () => {
  it.each(['admin key', 'admin user'])('a %s creates one', async (who) => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/apikeys', headers: callers[who], payload: { name: `admin by ${who}`, permissions: 'admin' } });
    expect(res.statusCode, res.body).toBe(201);
  });

  it.each(['write key', 'write user'])('a %s does not (403), but creates a write key', async (who) => {
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/apikeys', headers: callers[who], payload: { name: 'escalate', permissions: 'admin' } }), 403, 'FORBIDDEN');
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/apikeys', headers: callers[who], payload: { name: `write by ${who}`, permissions: 'write' } });
    expect(res.statusCode, res.body).toBe(201);
  });
});

describe('registering an agent', () => {
  it('is for agent keys; every other key and every user is 403', async () => {
    const register = (headers: Record<string, string>) => t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers, payload: { hostname: 'table-host', platform: 'linux' } });
    expect((await register(callers['agent key']!)).statusCode).toBe(200);
    for (const [who, headers] of Object.entries(callers).filter(([who]) => who !== 'agent key')) {
      expect((await register(headers)).statusCode, who).toBe(403);
    }
  });
});
