// Text the database cannot hold (issue 29, item 9): a NUL (or a lone surrogate, or an escape that is not
// UTF-8) in any text field, query value or path parameter is 400 VALIDATION_ERROR naming where, on both
// apps, where it was a 500; numbers beyond the id columns are 400 too. The heartbeat keeps a NUL inside
// its system data byte for byte, and the call-status call endpoints answer 200 text whatever they get.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError, type InjectedResponse } from './helpers/assertions.js';
import { startCallstatus, type CallstatusTest } from './helpers/callstatus.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';

let t: TestApp;
let token: string;
let agentKey: string;
let agentId: string;
let customerId: number;
let cs: CallstatusTest;

beforeAll(async () => {
  t = await buildTestApp();
  token = await adminToken(t);
  agentKey = (await createKey(t.app, bearer(token), 'agent')).key;
  customerId = (await createCustomer(t.app, token, 'NUL-1')).id;
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(agentKey), payload: { hostname: 'nul-host', platform: 'linux' } });
  agentId = (res.json() as { agent_id: string }).agent_id;
  cs = await startCallstatus();
});
afterAll(async () => {
  await cs.close();
  await t.close();
});

const send = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, headers: Record<string, string> = bearer(token)) =>
  t.app.inject({ method, url: `/api/v1${url}`, headers: { ...headers, ...(typeof payload === 'string' ? { 'content-type': 'application/json' } : {}) }, ...(payload === undefined ? {} : { payload: payload as string }) });

/** 400 VALIDATION_ERROR whose details name `path`. */
function expectRefused(res: InjectedResponse, path: string): void {
  const body = expectError(res, 400, 'VALIDATION_ERROR') as { details?: Array<{ path: string; message: string }> };
  expect(body.details?.[0]?.path, res.body).toBe(path);
}

describe('the RMM server refuses NUL where it was a 500', () => {
  it.each([
    ['customer number', '/customers', { number: 'C\u00001', name: 'x' }, 'number'],
    ['customer name', '/customers', { number: 'C-2', name: 'A\u0000B' }, 'name'],
    ['API key name', '/apikeys', { name: 'k\u0000', permissions: 'read' }, 'name'],
    ['agent name', '/agents', { name: 'pc\u0000' }, 'name'],
  ])('%s in the body', async (_what, url, payload, path) => {
    expectRefused(await send('POST', url, payload), path);
  });

  it('login username, register name and WAU rule display name', async () => {
    expectRefused(await send('POST', '/auth/login', { username: 'ad\u0000min', password: 'whatever' }, {}), 'username');
    expectRefused(await send('POST', '/agent/register', { hostname: 'h', name: 'n\u0000', platform: 'linux' }, apiKey(agentKey)), 'name');
    const rule = { action: 'allow', package_id: 'Mozilla.Firefox', display_name: 'Fire\u0000fox' };
    expectRefused(await send('POST', `/customers/${customerId}/wau/rules`, rule), 'display_name');
  });

  it.each([
    ['q of GET /agents', '/agents?q=%00', 'q'],
    ['actor of GET /audit', '/audit?actor=a%00', 'actor'],
    ['label of metrics', `/agents/${agentId}/metrics?label=%00`, 'label'],
    ['label of the summary', `/agents/${agentId}/metrics/summary?metric=cpu_usage&label=%00`, 'label'],
    ['interface of rates', `/agents/${agentId}/metrics/rates?interface=eth%000`, 'interface'],
  ])('%s', async (_what, url, path) => {
    expectRefused(await send('GET', url), path);
  });

  it('in object keys, nested values and arrays, and lone surrogates, naming where', async () => {
    expectRefused(await send('POST', '/customers', '{"number":"C-3","name":"x","a\\u0000b":1}'), 'a\\u0000b');
    expectRefused(await send('POST', '/customers', '{"number":"C-3","name":"\\ud800"}'), 'name');
    expectRefused(await send('PUT', '/settings', { backend_url: 'https://rmm.example', extra: [{ deep: ['ok', 'n\u0000'] }] }), 'extra.0.deep.1');
  });

  it('refuses percent-escapes that are not UTF-8 in queries and paths with the contract\'s body', async () => {
    expectRefused(await send('GET', '/agents?q=%FF'), 'q');
    expectRefused(await send('GET', '/agents?q=%E0%80'), 'q');
    expect((await send('GET', '/agents?q=100%25')).statusCode).toBe(200);
    expectRefused(await send('GET', '/agents/%FF'), 'path');
    expectError(await send('GET', `/customers/${'9'.repeat(200)}`), 404, 'NOT_FOUND');
  });

  it('refuses ids beyond the id columns in bodies and queries (400, not a 500)', async () => {
    expectRefused(await send('POST', '/agents', { name: 'big', customer_id: 2_147_483_648 }), 'customer_id');
    expectRefused(await send('GET', '/agents?customer_id=2147483648'), 'customer_id');
    expectRefused(await send('PUT', `/agents/${agentId}/customer`, { customer_id: 2_147_483_648 }), 'customer_id');
    expectRefused(await send('POST', '/apikeys', { name: 'k', permissions: 'read', customer_id: 2_147_483_648 }), 'customer_id');
  });
});

describe('the heartbeat', () => {
  const heartbeat = (text: string) => send('POST', '/agent/heartbeat', text, apiKey(agentKey));

  // NUL and lone surrogates in the system data, in the places the server reads too (metric labels,
  // certificates): one such heartbeat failed its whole batch, other agents' heartbeats included.
  it('stores a NUL inside its system data and serves it back byte for byte', async () => {
    const text = `{"agent_id":"${agentId}","platform":"linux","notes":"a\\u0000b","disks":[{"mount":"/\\u0000x","used_bytes":1,"total_bytes":2}],"network":{"interfaces":[{"name":"e\\u0000","rx_bytes":1,"tx_bytes":2}]},"gateways":[{"name":"g\\u0000w","rtt_ms":1,"loss_percent":0}],` +
      `"certificates":[{"name":"c\\u0000\\ud800","valid_to":"2026-01-01T00:00:00Z","in_use":true}],"odd":"\\udc00"}`;
    expect((await heartbeat(text)).statusCode).toBe(200);
    const system = await send('GET', `/agents/${agentId}/system`);
    expect(system.body).toBe(text);
  });

  it('refuses a NUL in the fields it copies into the agent (hostname, agent_version)', async () => {
    expectRefused(await heartbeat(`{"agent_id":"${agentId}","platform":"linux","hostname":"h\\u0000"}`), 'hostname');
    expectRefused(await heartbeat(`{"agent_id":"${agentId}","platform":"linux","agent_version":"1\\u0000"}`), 'agent_version');
  });
});

describe('the call-status service', () => {
  it.each([
    ['%00', '%00', 'Unknown extension: \\u0000'],
    ['12%0034', '12%0034', 'Unknown extension: 12\\u000034'],
    ['%FF', '%FF', 'Unknown extension: %FF'],
    ['of 5,000 digits', '1'.repeat(5000), `Unknown extension: ${'1'.repeat(64)}`],
  ])('answers a call for extension %s with 200 text (the spec: always 200)', async (_what, extension, text) => {
    for (const event of ['callstart', 'callend']) {
      const res = await cs.app.inject({ method: 'GET', url: `/${extension}/${event}` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.body).toBe(text);
    }
  });

  it('refuses a NUL personnel number and admin fields with 400 and its error body', async () => {
    expectRefused(await cs.app.inject({ method: 'POST', url: '/api/attendance/12%0034', payload: { status: 'anwesend' } }), 'personal_nr');
    expectRefused(await cs.admin('POST', '/api/admin/users', { display_name: 'A\u0000' }), 'display_name');
    expectRefused(await cs.admin('POST', '/api/admin/assignments', { user_id: 2_147_483_648, device_id: 1, segment: 0 }), 'user_id');
    expectRefused(await cs.admin('PUT', '/api/admin/users/1', { extension: '1\u00002' }), 'extension');
  });
});
