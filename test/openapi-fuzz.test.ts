// The RMM server fuzzed through its own OpenAPI document (issue 29): every operation gets poisoned path
// parameters, query values and bodies (test/helpers/openapi-fuzz.ts), as an admin and without
// credentials. No answer may be a 5xx, every error has the contract's body without internals, and the
// server is still ready afterwards. A route added later is fuzzed too, or this test fails.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createCustomer, createKey, login } from './helpers/identity.js';
import { expectAllCovered, fuzzEveryOperation, type FuzzRequest, type Operation } from './helpers/openapi-fuzz.js';

const SEED = 29;
let t: TestApp;
let token: string;
let agentId: string;
let customerId: number;

beforeAll(async () => {
  t = await buildTestApp();
  token = await adminToken(t);
  customerId = (await createCustomer(t.app, token, 'FUZZ-1')).id;
  const agentKey = (await createKey(t.app, bearer(token), 'agent')).key;
  const registered = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(agentKey), payload: { hostname: 'fuzz-host', platform: 'linux' } });
  expect(registered.statusCode, registered.body).toBe(200);
  agentId = (registered.json() as { agent_id: string }).agent_id;
});
afterAll(() => t.close());

/** Ids of the seeded resources where a path names them, so poisons reach past "not found". */
function known(name: string, op: Operation): string | undefined {
  if (name === 'agent_id' || (name === 'id' && op.path.startsWith('/api/v1/agents/{id}'))) return agentId;
  if (name === 'customer_id' || (name === 'id' && op.path.startsWith('/api/v1/customers/{id}'))) return String(customerId);
  // Never a real user, key or task: the fuzz must not delete or change the admin it signs in as.
  if (name === 'id' || name.endsWith('_id')) return op.path.startsWith('/api/v1/agents/{id}') ? undefined : '2147483647';
  return undefined;
}

/** The admin user's token on every operation that takes credentials (it may call them all). */
const credentials = (req: FuzzRequest): Record<string, string> => (req.authenticated && req.operation.access !== 'public' ? bearer(token) : {});

/** Logout, password and 2FA routes may end the session the fuzz uses: sign in again when they did. */
async function keepSignedIn(): Promise<void> {
  const me = await t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(token) });
  if (me.statusCode === 401) token = await login(t.app, 'admin', 'admin-password-1');
}

it('answers every poisoned request to every operation without a 5xx or internals, and stays ready', { timeout: 240_000 }, async () => {
  const run = await fuzzEveryOperation(t.app, '/api/v1/openapi.json', { seed: SEED, known, credentials, afterOperation: keepSignedIn });
  expect(run.problems).toEqual([]);
  expectAllCovered(run.doc, run.sent);
  // Every route the app has is in the document, so none escapes the fuzz.
  const routes = t.app.declaredRoutes.filter((r) => !r.hidden && r.method !== 'HEAD').map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`);
  expect(routes.filter((r) => !run.sent.has(r))).toEqual([]);
  expect(run.count).toBeGreaterThan(run.operations.length * 5);
  expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
});
