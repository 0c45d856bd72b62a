// Issue 61: alerting on checks, with real parts: the server with its background jobs, the reference
// agent running a TCP check against a listener this test opens and closes, and a webhook receiver. A
// CRITICAL held past the rule's for_seconds fires one alert, notified once; the check back OK resolves it
// once. A rule limited to another policy stays quiet.
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itemsOf } from './helpers/alert-rig.js';
import { adminToken, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';
import { httpReceiver, type HttpReceiver } from './helpers/notification-receivers.js';
import { PROCESS_TEST_TIMEOUT_MS } from './helpers/spawn-server.js';

let s: LiveServer;
let admin: string;
let agent: LiveAgent;
let receiver: HttpReceiver;
let listener: net.Server;
let port: number;

const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => s.app.inject({ method, url: `/api/v1${url}`, headers: bearer(admin), ...(payload ? { payload } : {}) });
const listen = (at = 0) => new Promise<net.Server>((resolve) => {
  const server = net.createServer((socket) => socket.end());
  server.listen(at, '127.0.0.1', () => resolve(server));
});
const alertsOf = async (ruleId: number) => ((await call('GET', `/alerts?rule_id=${ruleId}`)).json() as Array<{ state: string; label: string; summary: string }>);
const hooks = (event: string) => itemsOf(receiver).filter((item) => item.event === event);

beforeAll(async () => {
  receiver = await httpReceiver();
  s = await startLiveServer({ backgroundJobs: true, env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  admin = await adminToken(s);
  listener = await listen();
  port = (listener.address() as AddressInfo).port;
  agent = await s.startAgent((await createKey(s.app, bearer(admin), 'agent')).key, { name: 'db-01', checks: { changeReportDelayMs: 100, reportIntervalMs: 1000, firstRunMaxDelayMs: 500 } });
  expect((await call('PATCH', `/agents/${agent.id}`, { tags: ['db'] })).statusCode).toBe(200);
}, PROCESS_TEST_TIMEOUT_MS);
afterAll(async () => {
  await s?.close();
  await receiver?.close();
  listener?.close();
});

describe('alerts on checks (issue 61)', { timeout: 240_000 }, () => {
  it('fires one alert for a check CRITICAL past for_seconds, notified once, and resolves it once when the check is OK again', async () => {
    const policy = (await call('POST', '/check-policies', { name: 'Databases', tags: ['db'], checks: [{ name: 'PostgreSQL port', kind: 'tcp', params: { host: '127.0.0.1', port }, interval_seconds: 10, timeout_seconds: 3 }] })).json() as { id: number };
    const other = (await call('POST', '/check-policies', { name: 'Elsewhere', checks: [] })).json() as { id: number };
    const created = await call('POST', '/notification-channels', { name: 'on call', type: 'webhook', settings: { url: receiver.url('/hook') } });
    expect(created.statusCode, created.body).toBe(201);
    const channel = created.json() as { id: number };
    const rule = await call('POST', '/alert-rules', { name: 'Check critical', kind: 'check_state', channel_ids: [channel.id], params: { policy_id: policy.id, for_seconds: 3 } });
    expect(rule.statusCode, rule.body).toBe(201);
    const ruleId = (rule.json() as { id: number; params: object }).id;
    expect((rule.json() as { params: object }).params).toEqual({ states: ['critical'], policy_id: policy.id, for_seconds: 3 });
    const quiet = (await call('POST', '/alert-rules', { name: 'Other policy', kind: 'check_state', params: { policy_id: other.id, for_seconds: 0 } })).json() as { id: number };
    await expect.poll(async () => ((await call('GET', `/agents/${agent.id}/checks`)).json() as { checks: Array<{ state: string | null }> }).checks[0]?.state, { timeout: 20_000 }).toBe('ok');

    await new Promise<void>((resolve) => listener.close(() => resolve()));
    await expect.poll(async () => (await alertsOf(ruleId)).map((a) => a.state), { timeout: 30_000 }).toEqual(['firing']);
    const [alert] = await alertsOf(ruleId);
    expect(alert!.label).toMatch(/^PostgreSQL port · /);
    expect(alert!.summary).toMatch(/^Check "PostgreSQL port" \(Databases\) CRITICAL since .+: TCP CRITICAL/);
    // Notifications gather for 30 s per channel (outbox.repo.ts GROUP_WINDOW_MS) before they go out.
    await expect.poll(() => hooks('firing').length, { timeout: 60_000 }).toBe(1);

    listener = await listen(port);
    await expect.poll(async () => (await alertsOf(ruleId)).map((a) => a.state), { timeout: 30_000 }).toEqual(['resolved']);
    await expect.poll(() => hooks('resolved').length, { timeout: 60_000 }).toBe(1);
    expect(hooks('firing')).toHaveLength(1);
    expect(await alertsOf(quiet.id)).toEqual([]);
  });
});
