// Alerting as the on-call technician meets it (issue 31, acceptance 2), on a running server with its
// background jobs on an injected clock and a real webhook receiver on loopback: a CPU threshold that
// must hold for 5 minutes and clears only below its recovery threshold for 5 minutes; an agent that
// stops heartbeating fires "offline" once and resolves when it returns; a flapping agent sends one
// flapping notice; an alert inside a maintenance window notifies nobody, its resolution included.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { BACKGROUND_LOOPS, buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { httpReceiver, type HttpReceiver } from './helpers/notification-receivers.js';

const MIN = 60_000;
const clock = new FakeClock('2026-07-01T08:00:00Z');
let t: TestApp;
let admin: Record<string, string>;
let agentKey: string;
let receiver: HttpReceiver;
let channelId: number;
let customerId: number;

interface Item {
  event: string;
  alert_id: number;
  kind: string;
  summary: string;
  label: string;
  agent: { id: string; name: string; hostname: string };
  customer: { id: number } | null;
  link: string | null;
}
interface Alert {
  id: number;
  state: string;
  suppressed: boolean;
  summary: string;
  kind: string;
}

beforeAll(async () => {
  receiver = await httpReceiver();
  t = await buildTestApp({ clock, backgroundJobs: true, captureLogs: true, env: { WEBHOOK_ALLOW_LOOPBACK: 'true', PUBLIC_URL: 'https://rmm.example.net' } });
  admin = bearer(await adminToken(t));
  customerId = (await createCustomer(t.app, admin.authorization!.slice(7), 'C-31', 'Alert Customer')).id;
  agentKey = (await createKey(t.app, admin, 'agent')).key;
  const channel = await call('POST', '/notification-channels', { name: 'on-call hook', type: 'webhook', settings: { url: receiver.url('/hook') } });
  expect(channel.status).toBe(201);
  channelId = (channel.body as { id: number }).id;
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) {
  const res = await t.app.inject({ method, url: `/api/v1${url}`, headers: admin, ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.json() as unknown };
}

async function newAgent(hostname: string): Promise<string> {
  const reg = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(agentKey), payload: { hostname, platform: 'linux' } });
  const id = (reg.json() as { agent_id: string }).agent_id;
  expect((await call('PUT', `/agents/${id}/customer`, { customer_id: customerId })).status).toBe(200);
  return id;
}

async function heartbeat(agentId: string, cpu = 10): Promise<void> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: apiKey(agentKey), payload: { agent_id: agentId, platform: 'linux', cpu: { usage_percent: cpu } } });
  expect(res.statusCode).toBe(200);
}

/**
 * Moves time in 10-second steps, each once every background loop (monitor, evaluation, dispatcher) is
 * asleep again, so each runs whenever it is due, as it would in real time.
 */
async function minutes(n: number): Promise<void> {
  for (let i = 0; i < n * 6; i++) {
    await vi.waitFor(() => expect(clock.pendingSleepers).toBe(BACKGROUND_LOOPS), { timeout: 10_000 });
    await clock.advance(MIN / 6);
  }
  await vi.waitFor(() => expect(clock.pendingSleepers).toBe(BACKGROUND_LOOPS), { timeout: 10_000 });
}

async function rule(body: object): Promise<number> {
  const res = await call('POST', '/alert-rules', { channel_ids: [channelId], ...body });
  expect(res.status).toBe(201);
  return (res.body as { id: number }).id;
}

const alertsOf = async (ruleId: number) => ((await call('GET', `/alerts?rule_id=${ruleId}`)).body as Alert[]);

/** Every item the receiver got for these alerts, in order. */
function itemsFor(alertIds: readonly number[]): Item[] {
  return receiver.requests.flatMap((r) => (JSON.parse(r.body) as { alerts: Item[] }).alerts).filter((i) => alertIds.includes(i.alert_id));
}

describe('a CPU threshold with a duration and a recovery threshold', () => {
  it('fires after 5 minutes above 90 %, not after 4; stays at 85 %; resolves after 5 minutes below 80 %, notifying once each', async () => {
    const agentId = await newAgent('cpu-host');
    const ruleId = await rule({
      name: 'CPU hot',
      kind: 'metric_threshold',
      agent_id: agentId,
      params: { metric: 'cpu_usage', operator: '>', threshold: 90, for_seconds: 300, recovery_threshold: 80, recovery_seconds: 300 },
    });
    // Above 90 % at 0, 1, 2, 3 and 4 minutes: 4 minutes of crossing, no alert.
    for (let m = 0; m <= 4; m++) {
      await heartbeat(agentId, 95);
      await minutes(1);
    }
    expect(await alertsOf(ruleId)).toEqual([]);
    // The sample at 5 minutes completes the duration.
    await heartbeat(agentId, 96);
    await vi.waitFor(async () => expect(await alertsOf(ruleId)).toHaveLength(1));
    const [fired] = await alertsOf(ruleId);
    expect(fired).toMatchObject({ state: 'firing', suppressed: false, kind: 'metric_threshold' });
    expect(fired!.summary).toMatch(/CPU usage is 96 % \(> 90 %\) since 2026-07-01 08:00 UTC/);

    // Hysteresis: 85 % is below the threshold but not below the recovery threshold.
    for (let m = 0; m < 6; m++) {
      await heartbeat(agentId, 85);
      await minutes(1);
    }
    expect((await alertsOf(ruleId))[0]!.state).toBe('firing');
    // Below 80 % at 0..5 minutes resolves it at the sixth sample.
    for (let m = 0; m <= 5; m++) {
      await minutes(1);
      await heartbeat(agentId, 70);
    }
    await vi.waitFor(async () => expect((await alertsOf(ruleId))[0]!.state).toBe('resolved'));
    await minutes(1);
    await vi.waitFor(() => expect(itemsFor([fired!.id]).map((i) => i.event)).toEqual(['firing', 'resolved']));
    const [item] = itemsFor([fired!.id]);
    expect(item).toMatchObject({ agent: { id: agentId, hostname: 'cpu-host' }, customer: { id: customerId }, link: `https://rmm.example.net/agents/${agentId}` });
    await minutes(5);
    expect(itemsFor([fired!.id])).toHaveLength(2);
  });
});

describe('an agent that stops heartbeating', () => {
  it('fires "offline" once after the configured minutes and resolves when it returns', async () => {
    const agentId = await newAgent('quiet-host');
    const ruleId = await rule({ name: 'Offline 10 min', kind: 'agent_offline', agent_id: agentId, params: { minutes: 10 } });
    await heartbeat(agentId);
    await minutes(9);
    expect(await alertsOf(ruleId)).toEqual([]);
    await minutes(2);
    await vi.waitFor(async () => expect(await alertsOf(ruleId)).toHaveLength(1));
    await minutes(5);
    const alerts = await alertsOf(ruleId);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.summary).toMatch(/^Offline: no heartbeat for 1\d min \(limit 10 min\)/);
    await heartbeat(agentId);
    await minutes(1);
    await vi.waitFor(async () => expect((await alertsOf(ruleId))[0]!.state).toBe('resolved'));
    await minutes(1);
    await vi.waitFor(() => expect(itemsFor([alerts[0]!.id]).map((i) => i.event)).toEqual(['firing', 'resolved']));
  });
});

describe('a flapping agent', () => {
  it('sends one flapping notice, then nothing while it keeps flapping', async () => {
    const agentId = await newAgent('flappy-host');
    const ruleId = await rule({ name: 'Stale 2 min', kind: 'agent_offline', agent_id: agentId, params: { minutes: 2, status: 'stale' } });
    // Online, then stale (3 min without a heartbeat), online again … eight changes in about 16 minutes.
    for (let i = 0; i < 4; i++) {
      await heartbeat(agentId);
      await minutes(4);
    }
    await heartbeat(agentId);
    await minutes(2);
    const ids = (await alertsOf(ruleId)).map((a) => a.id);
    const flapping = (await alertsOf(ruleId)).filter((a) => a.kind === 'flapping');
    expect(flapping).toHaveLength(1);
    const events = itemsFor(ids).map((i) => i.event);
    expect(events.filter((e) => e === 'flapping')).toHaveLength(1);
    // Once flapping, its stale alerts are recorded but notify nobody.
    const afterNotice = events.slice(events.indexOf('flapping') + 1);
    expect(afterNotice.filter((e) => e === 'firing')).toEqual([]);
  });
});

describe('a maintenance window', () => {
  it('records an alert that begins inside it as suppressed, and notifies nobody, its resolution included', async () => {
    const agentId = await newAgent('maintained-host');
    const ruleId = await rule({ name: 'Offline in maintenance', kind: 'agent_offline', agent_id: agentId, params: { minutes: 6 } });
    const now = clock.now().getTime();
    const window = await call('POST', '/maintenance-windows', {
      name: 'Firmware night',
      agent_id: agentId,
      starts_at: new Date(now).toISOString(),
      ends_at: new Date(now + 60 * MIN).toISOString(),
    });
    expect(window.status).toBe(201);
    await heartbeat(agentId);
    await minutes(8);
    await vi.waitFor(async () => expect(await alertsOf(ruleId)).toHaveLength(1));
    // One alert: going stale and then offline is one outage, not flapping.
    expect(await alertsOf(ruleId)).toMatchObject([{ kind: 'agent_offline', state: 'firing', suppressed: true }]);
    await heartbeat(agentId);
    await minutes(1);
    await vi.waitFor(async () => expect((await alertsOf(ruleId))[0]!.state).toBe('resolved'));
    await minutes(1);
    expect(itemsFor((await alertsOf(ruleId)).map((a) => a.id))).toEqual([]);
  });
});
