// The call-status service fuzzed through its own OpenAPI document (issue 29), as the RMM server is in
// openapi-fuzz.test.ts: every operation, poisoned path parameters, query values and bodies, with the
// admin token and without. No 5xx, the contract's error body on every error, except the call endpoints,
// which answer 200 text whatever they get (callstatus.md §4), and the service is still ready afterwards.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addDevice, addUser, startCallstatus, type CallstatusTest } from './helpers/callstatus.js';
import { expectAllCovered, fuzzRequests, operationsOf, problemsWith, type Doc, type Operation } from './helpers/openapi-fuzz.js';

const SEED = 29;
let t: CallstatusTest;
let userId: number;

beforeAll(async () => {
  t = await startCallstatus();
  // The light is never reached (nothing listens there): a call's answer does not wait for it.
  const device = await addDevice(t, '127.0.0.1:9');
  userId = (await addUser(t, { name: 'Fuzz User', extension: '4711', personalNr: '~12 34', attendance: 'abwesend', assignments: [{ deviceId: device, segment: 0 }] })).id;
});
afterAll(() => t.close());

function known(name: string, op: Operation): string | undefined {
  if (name === 'extension') return '4711';
  if (name === 'personal_nr') return '1234';
  if (name === 'id') return op.path.startsWith('/api/admin/users') ? String(userId) : '2147483647';
  return undefined;
}

const isCallEndpoint = (op: Operation) => /^\/\{extension\}\/call(start|end)$/.test(op.path);

it('answers every poisoned request to every operation without a 5xx or internals, and stays ready', { timeout: 120_000 }, async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as Doc;
  const operations = operationsOf(doc).sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
  const sent = new Set<string>();
  const problems: string[] = [];
  let count = 0;
  for (const op of operations) {
    for (const req of fuzzRequests(doc, op, { seed: SEED, known })) {
      const res = await t.app.inject({
        method: req.method as 'GET',
        url: req.url,
        headers: { ...(req.authenticated ? { authorization: `Bearer ${t.adminToken}` } : {}), ...(req.payload === undefined ? {} : { 'content-type': 'application/json' }) },
        payload: req.payload,
      });
      count++;
      for (const p of problemsWith(res, isCallEndpoint(op))) problems.push(`${req.method} ${req.url.slice(0, 100)} [${req.label}]: ${p}`);
    }
    sent.add(`${op.method} ${op.path}`);
  }
  expect(problems).toEqual([]);
  expectAllCovered(doc, sent);
  expect(operations.filter(isCallEndpoint)).toHaveLength(4);
  expect(count).toBeGreaterThan(operations.length * 5);
  expect((await t.app.inject({ method: 'GET', url: '/api/attendance' })).statusCode).toBe(200);
});
