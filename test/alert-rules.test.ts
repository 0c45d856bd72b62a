// /api/v1/alert-rules on the real server (issue 31): the default rules of a new install, the 201 shape with
// defaults, validation details (params too), scope (a scoped key sees global rules read-only, others' are
// 404), read keys, channel checks, PUT as full replacement with a fixed kind, delete, filters, paging,
// audit, and the hooks the evaluators rely on (changed after each write, beforeDelete while it exists).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AlertRuleService } from '../src/modules/alerts/alert-rules.service.js';
import type { Caller } from '../src/modules/auth/caller.js';
import { FakeClock } from '../src/platform/clock.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';

interface Rule {
  id: number; name: string; kind: string; enabled: boolean; customer_id: number | null; agent_id: string | null;
  params: Record<string, unknown>; channel_ids: number[]; reminder_minutes: number | null; created_at: string; updated_at: string;
}
type ErrorBody = { code: string; details?: Array<{ path: string; message: string }> };

const RULE_FIELDS = ['id', 'name', 'kind', 'enabled', 'customer_id', 'agent_id', 'params', 'channel_ids', 'reminder_minutes', 'created_at', 'updated_at'];
const clock = new FakeClock('2026-07-01T08:00:00Z');
let s: LiveServer;
let admin: Record<string, string>;
let [writeKey, readKey, scopedA, agentA, agentB, loose] = ['', '', '', '', '', ''];
let [customerA, customerB] = [0, 0];
let channel: { global: number; a: number; b: number };

async function call(who: string | Record<string, string>, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) {
  const headers = typeof who === 'string' ? apiKey(who) : who;
  const res = await s.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.json() as unknown, headers: res.headers };
}
async function created(payload: object, who: string | Record<string, string> = writeKey): Promise<Rule> {
  const res = await call(who, 'POST', '/alert-rules', payload);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as Rule;
}
const list = async (query = '', who: string | Record<string, string> = writeKey) => (await call(who, 'GET', `/alert-rules${query}`)).body as Rule[];
const offline = (extra: object = {}) => ({ name: 'Offline', kind: 'agent_offline', ...extra });

/** A channel row straight into the table: the rule API only needs it to exist, with its customer. */
const insertChannel = async (name: string, customer_id: number | null) =>
  (await s.db.db.insertInto('notification_channels').values({ name, type: 'webhook', customer_id, settings: '{}', secret_hints: '{}', sealed_secrets: null, updated_at: clock.now() }).returning('id').executeTakeFirstOrThrow()).id;

beforeAll(async () => {
  s = await startLiveServer({ clock });
  const token = await adminToken(s);
  admin = bearer(token);
  customerA = (await createCustomer(s.app, token, 'R-1')).id;
  customerB = (await createCustomer(s.app, token, 'R-2')).id;
  writeKey = (await createKey(s.app, admin, 'write')).key;
  readKey = (await createKey(s.app, admin, 'read')).key;
  scopedA = (await createKey(s.app, admin, 'write', customerA)).key;
  agentA = await s.register((await createKey(s.app, admin, 'agent', customerA)).key, 'fw-a');
  agentB = await s.register((await createKey(s.app, admin, 'agent', customerB)).key, 'fw-b');
  loose = await s.register((await createKey(s.app, admin, 'agent')).key, 'fw-loose');
  channel = { global: await insertChannel('MSP on call', null), a: await insertChannel('A desk', customerA), b: await insertChannel('B desk', customerB) };
});
afterAll(() => s?.close());

it('a new install has the three default rules: global, enabled, no channels, no reminders', async () => {
  const rules = await list('', readKey);
  expect(rules.map((r) => [r.kind, r.params])).toEqual([
    ['agent_offline', { minutes: 5, status: 'offline' }],
    ['metric_threshold', { metric: 'disk_used_percent', operator: '>', threshold: 90, for_seconds: 300, recovery_threshold: 85, recovery_seconds: 300 }],
    ['certificate_expiry', { days: 14 }],
  ]);
  for (const r of rules) expect(r).toMatchObject({ enabled: true, customer_id: null, agent_id: null, channel_ids: [], reminder_minutes: null });
});

describe('creating a rule', () => {
  it('answers 201 with every field, the name trimmed and every default applied', async () => {
    const rule = await created({ name: '  Offline long  ', kind: 'agent_offline' });
    expect(Object.keys(rule).sort()).toEqual([...RULE_FIELDS].sort());
    const now = clock.now().toISOString();
    expect(rule).toMatchObject({ name: 'Offline long', kind: 'agent_offline', enabled: true, customer_id: null, agent_id: null, params: { minutes: 5, status: 'offline' }, channel_ids: [], reminder_minutes: null, created_at: now, updated_at: now });
    expect((await call(writeKey, 'GET', `/alert-rules/${rule.id}`)).body).toEqual(rule);
  });

  it('stores each kind’s params with its defaults, and offline minutes below the threshold as given', async () => {
    const cpu = await created({ name: 'CPU', kind: 'metric_threshold', params: { metric: 'cpu_usage', operator: '>', threshold: 90, recovery_threshold: 80 }, reminder_minutes: 30, enabled: false });
    expect(cpu).toMatchObject({ params: { metric: 'cpu_usage', operator: '>', threshold: 90, recovery_threshold: 80, for_seconds: 300 }, reminder_minutes: 30, enabled: false });
    expect((await created({ name: 'Tasks', kind: 'task_failed' })).params).toEqual({ statuses: ['error', 'completed_with_warning'] });
    expect((await created({ name: 'Backups', kind: 'backup_age' })).params).toEqual({ days: 7 });
    expect((await created({ name: 'Updates', kind: 'update_pending', params: { hours: 48 } })).params).toEqual({ hours: 48 });
    expect((await created(offline({ params: { minutes: 1, status: 'stale' } }))).params).toEqual({ minutes: 1, status: 'stale' });
  });

  it.each([
    ['an unknown kind', { name: 'x', kind: 'disk_on_fire' }, 'kind'],
    ['no name', { kind: 'backup_age' }, 'name'],
    ['a blank name', { name: '   ', kind: 'backup_age' }, 'name'],
    ['a name of 101 characters', { name: 'n'.repeat(101), kind: 'backup_age' }, 'name'],
    ['a metric threshold without metric', { name: 'x', kind: 'metric_threshold', params: { operator: '>', threshold: 1 } }, 'params.metric'],
    ['an unknown metric', { name: 'x', kind: 'metric_threshold', params: { metric: 'coffee', operator: '>', threshold: 1 } }, 'params.metric'],
    ['a recovery threshold past the threshold', { name: 'x', kind: 'metric_threshold', params: { metric: 'cpu_usage', operator: '>', threshold: 80, recovery_threshold: 90 } }, 'params.recovery_threshold'],
    ['offline minutes of 0', offline({ params: { minutes: 0 } }), 'params.minutes'],
    ['an unknown params field', offline({ params: { hours: 3 } }), 'params'],
    ['reminders every 4 minutes', offline({ reminder_minutes: 4 }), 'reminder_minutes'],
    ['reminders every 10081 minutes', offline({ reminder_minutes: 10_081 }), 'reminder_minutes'],
    ['21 channels', offline({ channel_ids: Array.from({ length: 21 }, (_, i) => i + 1) }), 'channel_ids'],
    ['both customer_id and agent_id', offline({ customer_id: 1, agent_id: 'a'.repeat(16) }), 'agent_id'],
  ])('refuses %s with 400 naming the field, and creates nothing', async (_what, payload, path) => {
    const before = (await list()).length;
    const res = await call(writeKey, 'POST', '/alert-rules', payload);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    const body = res.body as ErrorBody;
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.details?.map((d) => d.path)).toContain(path);
    expect((await list()).length).toBe(before);
  });

  it('404 for an unknown customer or agent', async () => {
    expect((await call(writeKey, 'POST', '/alert-rules', offline({ customer_id: 999_999 }))).status).toBe(404);
    expect((await call(writeKey, 'POST', '/alert-rules', offline({ agent_id: 'f'.repeat(32) }))).status).toBe(404);
  });
});

describe('channels of a rule', () => {
  const problem = async (payload: object, who = writeKey) => {
    const res = await call(who, 'POST', '/alert-rules', payload);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    return (res.body as ErrorBody).details ?? [];
  };

  it('stores them once each, in id order, in alert_rule_channels', async () => {
    const rule = await created(offline({ customer_id: customerA, channel_ids: [channel.a, channel.global, channel.a] }));
    expect(rule.channel_ids).toEqual([channel.global, channel.a].sort((x, y) => x - y));
    const rows = await s.db.db.selectFrom('alert_rule_channels').select('channel_id').where('rule_id', '=', rule.id).orderBy('channel_id').execute();
    expect(rows.map((r) => r.channel_id)).toEqual(rule.channel_ids);
  });

  it('a global rule takes only global channels', async () => {
    expect((await created(offline({ channel_ids: [channel.global] }))).channel_ids).toEqual([channel.global]);
    const details = await problem(offline({ channel_ids: [channel.global, channel.a] }));
    expect(details).toEqual([{ path: 'channel_ids.1', message: expect.stringContaining(`belongs to customer ${customerA}`) }]);
  });

  it('a customer or agent rule takes global channels and its customer’s, not another customer’s', async () => {
    expect((await created(offline({ agent_id: agentA, channel_ids: [channel.a, channel.global] }))).channel_ids).toHaveLength(2);
    expect((await problem(offline({ customer_id: customerA, channel_ids: [channel.b] })))[0]?.path).toBe('channel_ids.0');
    expect((await problem(offline({ agent_id: agentA, channel_ids: [channel.b] })))[0]?.message).toContain(`belongs to customer ${customerB}`);
    // An agent without a customer: global channels only.
    expect((await problem(offline({ agent_id: loose, channel_ids: [channel.a] })))[0]?.message).toContain('without a customer');
  });

  it('an unknown channel is a 400 naming it', async () => {
    expect(await problem(offline({ channel_ids: [2_000_000] }))).toEqual([{ path: 'channel_ids.0', message: expect.stringContaining('channel 2000000 not found') }]);
  });

  it('a scoped key may use only its customer’s channels, and another customer’s looks like an unknown one', async () => {
    expect((await created(offline({ customer_id: customerA, channel_ids: [channel.a] }), scopedA)).channel_ids).toEqual([channel.a]);
    const other = await problem(offline({ customer_id: customerA, channel_ids: [channel.b] }), scopedA);
    const unknown = await problem(offline({ customer_id: customerA, channel_ids: [2_000_000] }), scopedA);
    expect(other[0]?.message).toBe(unknown[0]?.message.replace('2000000', String(channel.b)));
    expect((await problem(offline({ customer_id: customerA, channel_ids: [channel.global] }), scopedA))[0]?.path).toBe('channel_ids.0');
  });
});

describe('scope and permissions', () => {
  it('a scoped key creates rules for its customer and its agents, and 404/403 outside them', async () => {
    expect((await created(offline({ customer_id: customerA }), scopedA)).customer_id).toBe(customerA);
    expect((await created(offline({ agent_id: agentA }), scopedA)).agent_id).toBe(agentA);
    expect((await call(scopedA, 'POST', '/alert-rules', offline({ customer_id: customerB }))).status).toBe(404);
    expect((await call(scopedA, 'POST', '/alert-rules', offline({ agent_id: agentB }))).status).toBe(404);
    expect((await call(scopedA, 'POST', '/alert-rules', offline({ agent_id: loose }))).status).toBe(404);
    const global = await call(scopedA, 'POST', '/alert-rules', offline());
    expect(global.status).toBe(403);
    expect((global.body as ErrorBody).code).toBe('FORBIDDEN');
  });

  it('a scoped key sees its customer’s, its agents’ and global rules; others’ are 404; global ones are read-only', async () => {
    const ofB = await created(offline({ customer_id: customerB }));
    const ofAgentB = await created(offline({ agent_id: agentB }));
    const ofLoose = await created(offline({ agent_id: loose }));
    const ofAgentA = await created(offline({ agent_id: agentA }));
    const visible = await list('', scopedA);
    expect(visible.every((r) => r.customer_id === customerA || r.agent_id === agentA || (r.customer_id === null && r.agent_id === null))).toBe(true);
    expect(visible.map((r) => r.id)).toContain(ofAgentA.id);
    for (const hidden of [ofB, ofAgentB, ofLoose]) {
      expect(visible.map((r) => r.id)).not.toContain(hidden.id);
      expect((await call(scopedA, 'GET', `/alert-rules/${hidden.id}`)).status).toBe(404);
      expect((await call(scopedA, 'PUT', `/alert-rules/${hidden.id}`, offline({ customer_id: customerA }))).status).toBe(404);
      expect((await call(scopedA, 'DELETE', `/alert-rules/${hidden.id}`)).status).toBe(404);
    }
    const defaultRule = (await list('?kind=certificate_expiry', scopedA)).find((r) => r.customer_id === null && r.agent_id === null)!;
    expect((await call(scopedA, 'GET', `/alert-rules/${defaultRule.id}`)).status).toBe(200);
    expect((await call(scopedA, 'PUT', `/alert-rules/${defaultRule.id}`, { name: 'mine', kind: 'certificate_expiry', customer_id: customerA })).status).toBe(403);
    expect((await call(scopedA, 'DELETE', `/alert-rules/${defaultRule.id}`)).status).toBe(403);
  });

  it('a read key lists and reads but cannot create, change or delete (403)', async () => {
    const rule = await created(offline());
    expect((await call(readKey, 'GET', '/alert-rules')).status).toBe(200);
    expect((await call(readKey, 'GET', `/alert-rules/${rule.id}`)).status).toBe(200);
    expect((await call(readKey, 'POST', '/alert-rules', offline())).status).toBe(403);
    expect((await call(readKey, 'PUT', `/alert-rules/${rule.id}`, offline())).status).toBe(403);
    expect((await call(readKey, 'DELETE', `/alert-rules/${rule.id}`)).status).toBe(403);
  });
});

describe('replacing and deleting', () => {
  it('PUT replaces the whole rule (left-out fields take their defaults), keeps created_at and moves updated_at', async () => {
    const rule = await created(offline({ customer_id: customerA, channel_ids: [channel.a], reminder_minutes: 60, enabled: false, params: { minutes: 30 } }));
    await clock.advance(60_000);
    const res = await call(writeKey, 'PUT', `/alert-rules/${rule.id}`, { name: 'Offline for agent', kind: 'agent_offline', agent_id: agentA, params: { status: 'stale' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      ...rule,
      name: 'Offline for agent',
      customer_id: null,
      agent_id: agentA,
      params: { minutes: 5, status: 'stale' },
      channel_ids: [],
      reminder_minutes: null,
      enabled: true,
      updated_at: clock.now().toISOString(),
    });
  });

  it('PUT refuses another kind (400 at kind), checks channels against the new scope, and 404s an unknown rule', async () => {
    const rule = await created(offline({ customer_id: customerA, channel_ids: [channel.a] }));
    const kind = await call(writeKey, 'PUT', `/alert-rules/${rule.id}`, { name: 'x', kind: 'backup_age' });
    expect(kind.status).toBe(400);
    expect((kind.body as ErrorBody).details?.[0]?.path).toBe('kind');
    const moved = await call(writeKey, 'PUT', `/alert-rules/${rule.id}`, offline({ customer_id: customerB, channel_ids: [channel.a] }));
    expect(moved.status).toBe(400);
    expect((await call(writeKey, 'GET', `/alert-rules/${rule.id}`)).body).toEqual(rule);
    expect((await call(writeKey, 'PUT', '/alert-rules/2000000', offline())).status).toBe(404);
  });

  it('DELETE answers ok, the rule and its channel rows are gone, and default rules can go too', async () => {
    const rule = await created(offline({ channel_ids: [channel.global] }));
    expect(await call(writeKey, 'DELETE', `/alert-rules/${rule.id}`)).toMatchObject({ status: 200, body: { ok: true } });
    expect((await call(writeKey, 'GET', `/alert-rules/${rule.id}`)).status).toBe(404);
    expect(await s.db.db.selectFrom('alert_rule_channels').selectAll().where('rule_id', '=', rule.id).execute()).toEqual([]);
    expect((await call(writeKey, 'DELETE', `/alert-rules/${rule.id}`)).status).toBe(404);
    const backup = await created({ name: 'to go', kind: 'backup_age' });
    const edited = await call(admin, 'PUT', `/alert-rules/${backup.id}`, { name: 'kept', kind: 'backup_age', params: { days: 3 } });
    expect((edited.body as Rule).params).toEqual({ days: 3 });
  });

  it('writes alert_rule.create, .update and .delete to the audit log', async () => {
    const rule = await created(offline());
    await call(writeKey, 'PUT', `/alert-rules/${rule.id}`, offline({ name: 'renamed' }));
    await call(writeKey, 'DELETE', `/alert-rules/${rule.id}`);
    await vi.waitFor(async () => {
      const rows = await s.db.db.selectFrom('audit_log').select(['action', 'path']).where('path', 'like', `/api/v1/alert-rules/${rule.id}%`).execute();
      expect(rows.map((r) => r.action).sort()).toEqual(['alert_rule.delete', 'alert_rule.update']);
      const creates = await s.db.db.selectFrom('audit_log').select('action').where('action', '=', 'alert_rule.create').execute();
      expect(creates.length).toBeGreaterThan(0);
    });
  });
});

describe('listing', () => {
  it('filters by customer (its rules and its agents’), agent, kind and enabled', async () => {
    const a = await created(offline({ customer_id: customerA }));
    const onAgent = await created({ name: 'disk', kind: 'metric_threshold', agent_id: agentA, enabled: false, params: { metric: 'disk_used_percent', operator: '>', threshold: 95 } });
    const ofCustomer = await list(`?customer_id=${customerA}`);
    expect(ofCustomer.map((r) => r.id)).toEqual(expect.arrayContaining([a.id, onAgent.id]));
    expect(ofCustomer.every((r) => r.customer_id === customerA || r.agent_id === agentA)).toBe(true);
    expect((await list(`?agent_id=${agentA}`)).every((r) => r.agent_id === agentA)).toBe(true);
    expect((await list('?kind=metric_threshold')).every((r) => r.kind === 'metric_threshold')).toBe(true);
    const disabled = await list('?enabled=false');
    expect(disabled.map((r) => r.id)).toContain(onAgent.id);
    expect(disabled.every((r) => !r.enabled)).toBe(true);
    expect((await list('?enabled=true')).every((r) => r.enabled)).toBe(true);
  });

  it('pages by id with limit and the Link header', async () => {
    const all = await list();
    expect(all.map((r) => r.id)).toEqual([...all.map((r) => r.id)].sort((x, y) => x - y));
    const first = await call(writeKey, 'GET', '/alert-rules?limit=2');
    expect((first.body as Rule[]).map((r) => r.id)).toEqual(all.slice(0, 2).map((r) => r.id));
    const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))?.[1];
    expect(next).toBeDefined();
    const second = await s.app.inject({ method: 'GET', url: next!, headers: apiKey(writeKey) });
    expect((second.json() as Rule[]).map((r) => r.id)).toEqual(all.slice(2, 4).map((r) => r.id));
  });
});

it('calls changed() after every write and beforeDelete(id, caller name) while the rule still exists', async () => {
  const events: string[] = [];
  const hooks = {
    changed: () => void events.push('changed'),
    beforeDelete: async (ruleId: number, by: string) => {
      const still = await s.db.db.selectFrom('alert_rules').select('id').where('id', '=', ruleId).executeTakeFirst();
      events.push(`beforeDelete ${ruleId} ${by} ${still ? 'present' : 'gone'}`);
    },
  };
  const rules = new AlertRuleService(s.db.db, clock, hooks);
  const caller: Caller = { kind: 'user', userId: 1, username: 'admin', role: 'admin', customerIds: null };
  const rule = await rules.create(caller, { name: 'hooked', kind: 'backup_age' });
  await rules.update(caller, rule.id, { name: 'hooked again', kind: 'backup_age' });
  await rules.delete(caller, rule.id);
  expect(events).toEqual(['changed', 'changed', `beforeDelete ${rule.id} admin present`, 'changed']);
  // A refused change calls nothing.
  await expect(rules.update(caller, rule.id, { name: 'x', kind: 'backup_age' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  expect(events).toHaveLength(4);
});
