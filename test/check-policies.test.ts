// Issue 61, the server's side of checks: policies over the API (validation, limits, who may), an agent's
// effective set pushed over its socket when it announces the capability and again when a tag, an override
// or a policy changes it, and results: states, history, perfdata as metric series, and results for checks
// the agent was not given ignored and counted. The agent here is a raw socket speaking the protocol, so
// the test controls exactly what it reports (the reference agent's checks: checks-reference-agent.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from './helpers/assertions.js';
import { adminToken, bearer, createCustomer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer, type RawPeer } from './helpers/live-agent.js';

let s: LiveServer;
let admin: string;
let agentKey: string;
let agentId: string;
let peer: RawPeer;

const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object, token = admin) =>
  s.app.inject({ method, url: `/api/v1${url}`, headers: bearer(token), ...(payload ? { payload } : {}) });

const tcpCheck = (name: string, port: number, extra: object = {}) => ({ name, kind: 'tcp', params: { host: '127.0.0.1', port, ...extra }, interval_seconds: 60, timeout_seconds: 5 });

/** Answers the next checks_set and returns its params. */
async function nextSet(): Promise<{ version: string; checks: Array<{ id: string; name: string; params: Record<string, unknown> }> }> {
  for (;;) {
    const command = await peer.nextCommand();
    peer.ws.send(JSON.stringify({ type: 'response', id: command.id, success: true, data: command.command === 'checks_set' ? { version: command.params.version } : {} }));
    if (command.command === 'checks_set') return command.params as never;
  }
}

function report(version: string, results: Array<{ check_id: string; state: number; output: string; perfdata?: object[]; ran_at?: string }>) {
  peer.ws.send(JSON.stringify({ type: 'check_results', version, results: results.map((r) => ({ duration_ms: 3, perfdata: [], ran_at: new Date().toISOString(), ...r })) }));
}

beforeAll(async () => {
  s = await startLiveServer();
  admin = await adminToken(s);
  agentKey = (await createKey(s.app, bearer(admin), 'agent')).key;
  agentId = await s.register(agentKey, 'web-01');
  expect((await call('PATCH', `/agents/${agentId}`, { tags: ['Web'] })).statusCode).toBe(200);
  peer = await s.openRaw(agentId, agentKey);
  peer.ws.send(JSON.stringify({ type: 'hello', capabilities: ['checks'] }));
  // Announcing the capability brings the agent its set at once: none yet.
  expect((await nextSet()).checks).toEqual([]);
});
afterAll(async () => {
  await s?.close();
});

describe('check policies (issue 61)', () => {
  let policyId: number;
  let checkId: string;
  let version: string;

  it('refuses what it cannot run: 1,000 checks, a bad threshold, a script without a command, and customer-scoped callers', async () => {
    const many = Array.from({ length: 1000 }, (_, i) => tcpCheck(`c${i}`, 1000 + i));
    const tooMany = expectError(await call('POST', '/check-policies', { name: 'huge', tags: ['web'], checks: many }), 400, 'VALIDATION_ERROR');
    expect(JSON.stringify(tooMany)).toContain('at most 100 checks');
    const bad = expectError(await call('POST', '/check-policies', { name: 'bad', checks: [{ ...tcpCheck('t', 80), params: { host: 'x', port: 70000 } }] }), 400, 'VALIDATION_ERROR');
    expect(JSON.stringify(bad)).toContain('checks.0.params.port');
    expectError(await call('POST', '/check-policies', { name: 'script', checks: [{ name: 's', kind: 'script', params: {} }] }), 400, 'VALIDATION_ERROR');
    const relative = expectError(await call('POST', '/check-policies', { name: 'script', checks: [{ name: 's', kind: 'script', params: { command: 'check_tcp' } }] }), 400, 'VALIDATION_ERROR');
    expect(JSON.stringify(relative)).toContain('absolute path');
    const customer = await createCustomer(s.app, admin, '61001');
    const scoped = (await createKey(s.app, bearer(admin), 'write', customer.id)).key;
    const res = await s.app.inject({ method: 'POST', url: '/api/v1/check-policies', headers: { 'x-api-key': scoped }, payload: { name: 'mine' } });
    expectError(res, 403, 'FORBIDDEN');
    expect((await call('GET', '/check-policies')).json()).toEqual([]);
  });

  it("sends a connected agent its set when a policy for one of its tags appears, and keeps its results", async () => {
    const created = await call('POST', '/check-policies', { name: 'Web servers', tags: ['WEB'], checks: [tcpCheck('HTTPS port', 443, { warn_ms: 200 })] });
    expect(created.statusCode, created.body).toBe(201);
    const policy = created.json() as { id: number; tags: string[]; agent_count: number; checks: Array<{ id: string; params: Record<string, unknown> }> };
    expect(policy).toMatchObject({ tags: ['web'], agent_count: 1 });
    policyId = policy.id;
    checkId = policy.checks[0]!.id;
    const set = await nextSet();
    expect(set.checks).toEqual([expect.objectContaining({ id: checkId, name: 'HTTPS port', params: { host: '127.0.0.1', port: 443, warn_ms: 200 } })]);
    version = set.version;

    report(version, [
      { check_id: checkId, state: 2, output: 'TCP CRITICAL - connection refused', ran_at: new Date(Date.now() - 1000).toISOString() },
      { check_id: checkId, state: 0, output: 'TCP OK - 0.002 s', perfdata: [{ label: 'time', value: 2, uom: 'ms' }] },
      { check_id: '00000000-0000-4000-8000-000000000000', state: 2, output: 'a check it was never given' },
    ]);
    await expect.poll(async () => (await call('GET', `/agents/${agentId}/checks`)).json(), { timeout: 10_000 }).toMatchObject({
      supported: true,
      version,
      checks: [{ id: checkId, policy_name: 'Web servers', state: 'ok', output: 'TCP OK - 0.002 s', perfdata: [{ label: 'time', value: 2, uom: 'ms' }] }],
    });
    const history = (await call('GET', `/agents/${agentId}/checks/${checkId}/history`)).json() as Array<{ state: string }>;
    expect(history.map((h) => h.state)).toEqual(['ok', 'critical']);
    expect((await call('GET', '/checks/status')).json()).toMatchObject({ received_results: 3, ignored_results: 1, agents_with_sets: 1 });
    // Perfdata is a metric series in seconds, labelled by the check.
    const samples = (await call('GET', `/agents/${agentId}/metrics?metric=check_perf&label=${checkId}/time`)).json() as Array<{ value: number }>;
    expect(samples.map((p) => p.value)).toEqual([0.002]);
  });

  it('lists failing checks across the fleet', async () => {
    report(version, [{ check_id: checkId, state: 1, output: 'TCP WARNING - 0.300 s' }]);
    await expect.poll(async () => (await call('GET', '/checks/failing')).json(), { timeout: 10_000 }).toMatchObject([{ agent_id: agentId, check_id: checkId, state: 'warning', policy_name: 'Web servers' }]);
  });

  it('changes one threshold for one agent with an override, and takes the check away (and its failing state) when the tag goes', async () => {
    expectError(await call('PUT', `/agents/${agentId}/check-overrides/${checkId}`, { params: { warn_ms: 'slow' } }), 400, 'VALIDATION_ERROR');
    expect((await call('PUT', `/agents/${agentId}/check-overrides/${checkId}`, { params: { warn_ms: 900 } })).statusCode).toBe(200);
    const overridden = await nextSet();
    expect(overridden.checks[0]!.params).toEqual({ host: '127.0.0.1', port: 443, warn_ms: 900 });
    expect((await call('GET', `/agents/${agentId}/checks`)).json()).toMatchObject({ checks: [{ overridden: true, params: { warn_ms: 900 } }] });

    expect((await call('PATCH', `/agents/${agentId}`, { tags: ['db'] })).statusCode).toBe(200);
    const none = await nextSet();
    expect(none.checks).toEqual([]);
    expect((await call('GET', `/agents/${agentId}/checks`)).json()).toMatchObject({ checks: [] });
    await expect.poll(async () => (await call('GET', '/checks/failing')).json(), { timeout: 10_000 }).toEqual([]);
    // Results for the check it no longer has are ignored.
    report(none.version, [{ check_id: checkId, state: 2, output: 'late' }]);
    await expect.poll(async () => ((await call('GET', '/checks/status')).json() as { ignored_results: number }).ignored_results, { timeout: 10_000 }).toBe(2);
  });

  it('deletes a policy with its checks', async () => {
    expect((await call('DELETE', `/check-policies/${policyId}`)).statusCode).toBe(200);
    expectError(await call('GET', `/check-policies/${policyId}`), 404, 'NOT_FOUND');
    expect((await call('GET', `/agents/${agentId}/check-overrides`)).json()).toEqual([]);
  });
});
