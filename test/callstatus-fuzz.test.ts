// The call-status service fuzzed through its own OpenAPI document (issue 29), as the RMM server is in
// openapi-fuzz.test.ts: every operation, poisoned path parameters, query values and bodies, with the
// admin token and without. No 5xx, the contract's error body on every error, except the call endpoints,
// which answer 200 text whatever they get (callstatus.md §4), and the service is still ready afterwards.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addDevice, addUser, startCallstatus, type CallstatusTest } from './helpers/callstatus.js';
import { expectAllCovered, fuzzEveryOperation, type FuzzRequest, type Operation } from './helpers/openapi-fuzz.js';

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
  const credentials = (req: FuzzRequest): Record<string, string> => (req.authenticated ? { authorization: `Bearer ${t.adminToken}` } : {});
  const run = await fuzzEveryOperation(t.app, '/api/openapi.json', { seed: SEED, known, credentials, plainText200: isCallEndpoint });
  expect(run.problems).toEqual([]);
  expectAllCovered(run.doc, run.sent);
  expect(run.operations.filter(isCallEndpoint)).toHaveLength(4);
  expect(run.count).toBeGreaterThan(run.operations.length * 5);
  expect((await t.app.inject({ method: 'GET', url: '/api/attendance' })).statusCode).toBe(200);
});
