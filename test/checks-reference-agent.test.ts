// Issue 61 end to end, with real parts: the server, the reference agent over its socket, Monitoring
// Plugins' check_tcp, check_http and check_disk as script checks beside the built-in TCP, HTTP and process
// checks, against servers this test starts and stops. A policy for a tag reaches a connected agent and
// one that was offline (on reconnect); results become states, history and perfdata series; the check
// changes state when its server goes and comes back.
import { existsSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';
import { PROCESS_TEST_TIMEOUT_MS } from './helpers/spawn-server.js';

const PLUGINS = '/usr/lib/nagios/plugins';
const havePlugins = existsSync(`${PLUGINS}/check_tcp`) && existsSync(`${PLUGINS}/check_http`) && existsSync(`${PLUGINS}/check_disk`);

let s: LiveServer;
let admin: string;
let key: string;
let web: LiveAgent;
let tcp: net.Server;
let tcpPort: number;
let site: http.Server;
let sitePort: number;

const FAST = { changeReportDelayMs: 100, reportIntervalMs: 1000, firstRunMaxDelayMs: 500 };
const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: object) =>
  s.app.inject({ method, url: `/api/v1${url}`, headers: bearer(admin), ...(payload ? { payload } : {}) });

interface CheckView {
  id: string;
  name: string;
  state: string | null;
  output: string | null;
  perfdata: Array<{ label: string; value: number; uom: string }>;
}
const checksOf = async (agentId: string) => ((await call('GET', `/agents/${agentId}/checks`)).json() as { checks: CheckView[] }).checks;
const stateOf = async (agentId: string, name: string) => (await checksOf(agentId)).find((c) => c.name === name)?.state ?? null;

function listenTcp(port = 0): Promise<net.Server> {
  const server = net.createServer((socket) => socket.end());
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  s = await startLiveServer();
  admin = await adminToken(s);
  key = (await createKey(s.app, bearer(admin), 'agent')).key;
  tcp = await listenTcp();
  tcpPort = (tcp.address() as AddressInfo).port;
  site = http.createServer((_req, res) => res.end('line-of-business app: ready'));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  sitePort = (site.address() as AddressInfo).port;
  web = await s.startAgent(key, { name: 'web-checks', checks: FAST });
  expect((await call('PATCH', `/agents/${web.id}`, { tags: ['lob'] })).statusCode).toBe(200);
}, PROCESS_TEST_TIMEOUT_MS);
afterAll(async () => {
  await s?.close();
  tcp?.close();
  site?.close();
});

describe.skipIf(!havePlugins)('checks on the reference agent (issue 61; needs monitoring-plugins-basic)', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('runs Monitoring Plugins and built-in checks that a policy for its tag assigns, and reports their states and perfdata', async () => {
    const policy = await call('POST', '/check-policies', {
      name: 'Line of business',
      tags: ['LOB'],
      checks: [
        { name: 'plugin tcp', kind: 'script', params: { command: `${PLUGINS}/check_tcp`, args: ['-H', '127.0.0.1', '-p', String(tcpPort)] }, interval_seconds: 10, timeout_seconds: 5 },
        { name: 'plugin http', kind: 'script', params: { command: `${PLUGINS}/check_http`, args: ['-H', '127.0.0.1', '-p', String(sitePort), '-s', 'ready'] }, interval_seconds: 10, timeout_seconds: 5 },
        { name: 'plugin disk', kind: 'script', params: { command: `${PLUGINS}/check_disk`, args: ['-w', '1%', '-c', '0%', '-p', '/'] }, interval_seconds: 60, timeout_seconds: 10 },
        { name: 'built-in tcp', kind: 'tcp', params: { host: '127.0.0.1', port: tcpPort }, interval_seconds: 10, timeout_seconds: 5 },
        { name: 'built-in http', kind: 'http', params: { url: `http://127.0.0.1:${sitePort}/`, body_contains: 'ready' }, interval_seconds: 10, timeout_seconds: 5 },
        { name: 'node runs', kind: 'process', params: { pattern: 'node', match: 'name', min: 1 }, interval_seconds: 10, timeout_seconds: 5 },
      ],
    });
    expect(policy.statusCode, policy.body).toBe(201);
    await expect
      .poll(async () => Object.fromEntries((await checksOf(web.id)).map((c) => [c.name, c.state])), { timeout: 30_000 })
      .toEqual({ 'plugin tcp': 'ok', 'plugin http': 'ok', 'plugin disk': 'ok', 'built-in tcp': 'ok', 'built-in http': 'ok', 'node runs': 'ok' });
    const pluginTcp = (await checksOf(web.id)).find((c) => c.name === 'plugin tcp')!;
    expect(pluginTcp.output).toMatch(/^TCP OK/);
    expect(pluginTcp.perfdata).toContainEqual(expect.objectContaining({ label: 'time', uom: 's' }));
    // check_tcp's time=…s is a metric series, labelled by the check.
    await expect
      .poll(async () => ((await call('GET', `/agents/${web.id}/metrics?metric=check_perf&label=${pluginTcp.id}/time`)).json() as unknown[]).length, { timeout: 15_000 })
      .toBeGreaterThan(0);
  });

  it('turns CRITICAL within an interval and a timeout when the server goes, and OK again when it is back', async () => {
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
    await expect.poll(() => stateOf(web.id, 'plugin tcp'), { timeout: 20_000 }).toBe('critical');
    await expect.poll(() => stateOf(web.id, 'built-in tcp'), { timeout: 20_000 }).toBe('critical');
    tcp = await listenTcp(tcpPort);
    await expect.poll(() => stateOf(web.id, 'plugin tcp'), { timeout: 20_000 }).toBe('ok');
    const id = (await checksOf(web.id)).find((c) => c.name === 'plugin tcp')!.id;
    const history = (await call('GET', `/agents/${web.id}/checks/${id}/history`)).json() as Array<{ state: string }>;
    expect(history.map((h) => h.state)).toEqual(['ok', 'critical', 'ok']);
  });

  it('brings the set to an agent that was offline when its tag was given, once it reconnects', async () => {
    const late = await s.startAgent(key, { name: 'late-checks', checks: FAST });
    const lateId = late.id;
    await late.stop();
    expect((await call('PATCH', `/agents/${lateId}`, { tags: ['lob'] })).statusCode).toBe(200);
    const back = await s.startAgent(key, { name: 'late-checks', agentId: lateId, checks: FAST });
    expect(back.id).toBe(lateId);
    await expect.poll(() => stateOf(lateId, 'built-in http'), { timeout: 30_000 }).toBe('ok');
    expect(back.agent.checkSet?.checks.map((c) => c.name).sort()).toEqual(['built-in http', 'built-in tcp', 'node runs', 'plugin disk', 'plugin http', 'plugin tcp']);
  });
});

describe('an agent that predates checks (issue 61)', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('is shown as not running checks, gets no set, and keeps working', async () => {
    const before = (await call('GET', '/checks/status')).json() as { agents_with_sets: number };
    const old = await s.startAgent(key, { name: 'old-agent', checks: false });
    expect((await call('PATCH', `/agents/${old.id}`, { tags: ['lob'] })).statusCode).toBe(200);
    const view = (await call('GET', `/agents/${old.id}/checks`)).json() as { supported: boolean; version: string | null; checks: CheckView[] };
    expect(view.supported).toBe(false);
    // The server still says what the policy would run there; nothing ran.
    expect(view.checks.length).toBeGreaterThan(0);
    expect(view.checks.every((c) => c.state === null)).toBe(true);
    expect(old.agent.checkSet).toBeNull();
    expect(((await call('GET', '/checks/status')).json() as { agents_with_sets: number }).agents_with_sets).toBe(before.agents_with_sets);
    // Its socket is in use as before: a command goes through.
    const ran = await call('POST', `/agents/${old.id}/exec`, { command: 'echo still here', timeout: 10 });
    expect(ran.statusCode, ran.body).toBe(200);
    expect(ran.body).toContain('still here');
  });
});
