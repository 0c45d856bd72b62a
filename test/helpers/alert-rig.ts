// A running server for alerting tests (issue 31): the real app with its background jobs (status
// monitor, alert evaluation timer, outbox dispatcher …) on a FakeClock, a signed-in admin, an agent key,
// and the calls these tests repeat (agents, heartbeats, rules, webhook channels, alerts). Time moves
// the way test/alerts-acceptance.test.ts moves it: in 10-second steps, each once every background loop
// sleeps again, so every job runs when it is due as it would in real time. The default rules of a new
// install are deleted first, so only each test's own rules make alerts.
import { expect, vi } from 'vitest';
import { FakeClock } from '../../src/platform/clock.js';
import { BACKGROUND_LOOPS, buildTestApp, type TestApp } from './app.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './identity.js';
import type { HttpReceiver } from './notification-receivers.js';

export const MIN = 60_000;
const STEP_MS = 10_000;

export interface Alert {
  id: number;
  rule_id: number | null;
  kind: string;
  agent_id: string;
  customer_id: number | null;
  label: string;
  state: 'firing' | 'acknowledged' | 'resolved';
  summary: string;
  value: number | null;
  fired_at: string;
  acknowledged_by: string | null;
  ack_comment: string | null;
  resolved_by: string | null;
  resolve_comment: string | null;
  delivery_error: string | null;
}

/** One alert event as a webhook channel carries it. */
export interface Item {
  event: string;
  alert_id: number;
  summary: string;
  label: string;
  at: string;
  by: string | null;
  comment: string | null;
  agent: { id: string; hostname: string };
  link: string | null;
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
export interface Answer<T = unknown> {
  status: number;
  body: T;
  headers: Record<string, unknown>;
  raw: { statusCode: number; body: string; json(): unknown; headers: Record<string, unknown> };
}

export class AlertRig {
  #platforms = new Map<string, string>();

  private constructor(
    readonly t: TestApp,
    readonly clock: FakeClock,
    readonly admin: Record<string, string>,
    readonly adminJwt: string,
    readonly agentKey: string,
  ) {}

  static async start(start = '2026-07-01T08:00:00Z'): Promise<AlertRig> {
    const clock = new FakeClock(start);
    const t = await buildTestApp({ clock, backgroundJobs: true, env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
    const jwt = await adminToken(t);
    const admin = bearer(jwt);
    const agentKey = (await createKey(t.app, admin, 'agent')).key;
    const rig = new AlertRig(t, clock, admin, jwt, agentKey);
    for (const rule of (await rig.call<Array<{ id: number }>>('GET', '/alert-rules')).body) {
      expect((await rig.call('DELETE', `/alert-rules/${rule.id}`)).status).toBe(200);
    }
    return rig;
  }

  close(): Promise<void> {
    return this.t.close();
  }

  async call<T = unknown>(method: Method, url: string, payload?: object, headers: Record<string, string> = this.admin): Promise<Answer<T>> {
    const res = await this.t.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: (res.body === '' ? null : res.json()) as T, headers: res.headers, raw: res };
  }

  async customer(number: string): Promise<number> {
    return (await createCustomer(this.t.app, this.adminJwt, number)).id;
  }

  async newAgent(hostname: string, options: { customerId?: number; platform?: 'linux' | 'freebsd' } = {}): Promise<string> {
    const platform = options.platform ?? 'linux';
    const reg = await this.t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(this.agentKey), payload: { hostname, platform } });
    expect(reg.statusCode, reg.body).toBe(200);
    const id = (reg.json() as { agent_id: string }).agent_id;
    this.#platforms.set(id, platform);
    if (options.customerId !== undefined) expect((await this.call('PUT', `/agents/${id}/customer`, { customer_id: options.customerId })).status).toBe(200);
    return id;
  }

  /** A heartbeat with CPU usage and whatever else the test adds (disks, certificates …). */
  async heartbeat(agentId: string, cpu = 10, extra: Record<string, unknown> = {}): Promise<void> {
    const payload = { agent_id: agentId, platform: this.#platforms.get(agentId) ?? 'linux', cpu: { usage_percent: cpu }, ...extra };
    const res = await this.t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: apiKey(this.agentKey), payload });
    expect(res.statusCode, res.body).toBe(200);
  }

  async rule(body: object): Promise<number> {
    const res = await this.call<{ id: number }>('POST', '/alert-rules', body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id;
  }

  /** A rule that fires on the first heartbeat above 90 % CPU and resolves on the first one below. */
  cpuRule(scope: { agent_id?: string; customer_id?: number }, channelIds: number[] = [], extra: object = {}): Promise<number> {
    const params = { metric: 'cpu_usage', operator: '>', threshold: 90, for_seconds: 0 };
    return this.rule({ name: 'CPU hot', kind: 'metric_threshold', params, channel_ids: channelIds, ...scope, ...extra });
  }

  async webhookChannel(receiver: HttpReceiver, path: string): Promise<number> {
    const res = await this.call<{ id: number }>('POST', '/notification-channels', { name: `hook ${path}`, type: 'webhook', settings: { url: receiver.url(path) } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id;
  }

  async alerts(query: string, headers: Record<string, string> = this.admin): Promise<Alert[]> {
    const res = await this.call<Alert[]>('GET', `/alerts?${query}`, undefined, headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  }

  async alert(id: number): Promise<Alert> {
    const res = await this.call<Alert>('GET', `/alerts/${id}`);
    expect(res.status).toBe(200);
    return res.body;
  }

  /** Waits until the rule has `count` alerts in `state` (default: any state) and returns the rule's alerts. */
  async awaitAlerts(ruleId: number, count: number, state?: Alert['state']): Promise<Alert[]> {
    await vi.waitFor(async () => expect((await this.alerts(`rule_id=${ruleId}${state ? `&state=${state}` : ''}`)).length).toBe(count), { timeout: 10_000 });
    return this.alerts(`rule_id=${ruleId}`);
  }

  /** Waits until every background loop sleeps on the clock. */
  async idle(): Promise<void> {
    await vi.waitFor(() => expect(this.clock.pendingSleepers).toBe(BACKGROUND_LOOPS), { timeout: 10_000 });
  }

  /** Moves time in 10-second steps, each once every loop is asleep again. */
  async advance(ms: number): Promise<void> {
    for (let done = 0; done < ms; done += STEP_MS) {
      await this.idle();
      await this.clock.advance(Math.min(STEP_MS, ms - done));
    }
    await this.idle();
  }

  minutes(n: number): Promise<void> {
    return this.advance(n * MIN);
  }

  /** Moves time in one jump (loops wake once on the way), for long quiet stretches. */
  async jump(ms: number): Promise<void> {
    await this.idle();
    await this.clock.advance(ms);
    await this.idle();
  }
}

/** Every item a webhook receiver got, in order, with the delivery id of its message. */
export function itemsOf(receiver: HttpReceiver, path?: string): Array<Item & { delivery: string }> {
  return receiver.requests
    .filter((r) => path === undefined || r.path === path)
    .flatMap((r) => (JSON.parse(r.body) as { alerts: Item[] }).alerts.map((i) => ({ ...i, delivery: String(r.headers['x-rmm-delivery']) })));
}
