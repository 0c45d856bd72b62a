// The alerts API as a technician and an integration meet it (issue 31), on the real server with its
// background jobs on a FakeClock: acknowledging and resolving by hand (who and why recorded, 409 on a
// second try or a resolved alert, audit entries), read keys that may look but not act, customer-scoped
// keys that see their customer's alerts only (list, summary, 404 on others'), bad ids and filters,
// and the list itself: open alerts first (firing before acknowledged), then resolved ones newest first,
// every filter, and paging with limit and the Link header.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AlertRig, MIN, type Alert } from './helpers/alert-rig.js';
import { expectError } from './helpers/assertions.js';
import { apiKey, createKey } from './helpers/identity.js';
import { expectPagesJoinToWhole } from './helpers/paging.js';

let rig: AlertRig;
let readKey: Record<string, string>;
let writeKey: { headers: Record<string, string>; hint: string };

beforeAll(async () => {
  rig = await AlertRig.start();
  readKey = apiKey((await createKey(rig.t.app, rig.admin, 'read')).key);
  const write = await createKey(rig.t.app, rig.admin, 'write');
  writeKey = { headers: apiKey(write.key), hint: write.key_hint };
});
afterAll(() => rig?.close());

/** A firing alert of a fresh agent under its own CPU rule. */
async function firingAlert(hostname: string, customerId?: number): Promise<Alert> {
  const agentId = await rig.newAgent(hostname, customerId === undefined ? {} : { customerId });
  const ruleId = await rig.cpuRule({ agent_id: agentId });
  await rig.heartbeat(agentId, 95);
  return (await rig.awaitAlerts(ruleId, 1))[0]!;
}

const act = (id: number, verb: 'acknowledge' | 'resolve', body: object = {}, headers = rig.admin) => rig.call<Alert>('POST', `/alerts/${id}/${verb}`, body, headers);

describe('acknowledging', () => {
  it('answers the alert with who acknowledged it (username or key hint), when, and the comment', async () => {
    const alert = await firingAlert('ack-host');
    const byUser = await act(alert.id, 'acknowledge', { comment: 'on it, replacing the fan' });
    expect(byUser.status).toBe(200);
    expect(byUser.body).toMatchObject({ id: alert.id, state: 'acknowledged', acknowledged_by: 'admin', ack_comment: 'on it, replacing the fan', acknowledged_at: rig.clock.now().toISOString(), resolved_at: null });
    expect(await rig.alert(alert.id)).toMatchObject({ state: 'acknowledged', acknowledged_by: 'admin' });

    const other = await firingAlert('ack-by-key');
    const byKey = await act(other.id, 'acknowledge', {}, writeKey.headers);
    expect(byKey.status).toBe(200);
    expect(byKey.body).toMatchObject({ state: 'acknowledged', acknowledged_by: writeKey.hint, ack_comment: null });
  });

  it('refuses a second acknowledgement and one of a resolved alert with 409 CONFLICT, changing nothing', async () => {
    const alert = await firingAlert('ack-twice');
    expect((await act(alert.id, 'acknowledge', { comment: 'first' })).status).toBe(200);
    const again = await act(alert.id, 'acknowledge', { comment: 'second' }, writeKey.headers);
    expectError(again.raw, 409, 'CONFLICT');
    expect(await rig.alert(alert.id)).toMatchObject({ acknowledged_by: 'admin', ack_comment: 'first' });

    const resolved = await firingAlert('ack-resolved');
    expect((await act(resolved.id, 'resolve')).status).toBe(200);
    expectError((await act(resolved.id, 'acknowledge')).raw, 409, 'CONFLICT');
    expectError((await act(resolved.id, 'resolve', { comment: 'again' })).raw, 409, 'CONFLICT');
    expect(await rig.alert(resolved.id)).toMatchObject({ state: 'resolved', acknowledged_by: null, resolve_comment: null });
  });
});

describe('resolving by hand', () => {
  it('records who resolved it and why; an acknowledged alert can be resolved too', async () => {
    const alert = await firingAlert('resolve-host');
    const res = await act(alert.id, 'resolve', { comment: 'false alarm: benchmark run' }, writeKey.headers);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ state: 'resolved', resolved_by: writeKey.hint, resolve_comment: 'false alarm: benchmark run', resolved_at: rig.clock.now().toISOString() });

    const acked = await firingAlert('resolve-acked');
    await act(acked.id, 'acknowledge', { comment: 'looking' });
    expect((await act(acked.id, 'resolve')).body).toMatchObject({ state: 'resolved', resolved_by: 'admin', resolve_comment: null, acknowledged_by: 'admin', ack_comment: 'looking' });
  });

  it('writes alert.acknowledge and alert.resolve to the audit log with the actor and the alert', async () => {
    const alert = await firingAlert('audited-host');
    await act(alert.id, 'acknowledge', { comment: 'audit me' });
    await act(alert.id, 'resolve', {}, writeKey.headers);
    await vi.waitFor(async () => {
      const entries = (await rig.call<Array<{ action: string; actor: string; path: string; status_code: number }>>('GET', '/audit?limit=100')).body;
      const mine = entries.filter((e) => e.path.startsWith(`/api/v1/alerts/${alert.id}/`));
      expect(mine.map((e) => [e.action, e.actor, e.status_code]).sort()).toEqual([
        ['alert.acknowledge', 'admin', 200],
        ['alert.resolve', writeKey.hint, 200],
      ]);
    });
  });
});

describe('access and customer scope', () => {
  it('lets a read key list, read and count alerts but not acknowledge or resolve them (403)', async () => {
    const alert = await firingAlert('read-key-host');
    expect((await rig.alerts(`agent_id=${alert.agent_id}`, readKey)).map((a) => a.id)).toEqual([alert.id]);
    expect((await rig.call('GET', `/alerts/${alert.id}`, undefined, readKey)).status).toBe(200);
    const summary = await rig.call<{ open: number; firing: number }>('GET', '/alerts/summary', undefined, readKey);
    expect(summary.status).toBe(200);
    expect(summary.body.firing).toBeGreaterThanOrEqual(1);
    expectError((await act(alert.id, 'acknowledge', {}, readKey)).raw, 403, 'FORBIDDEN');
    expectError((await act(alert.id, 'resolve', {}, readKey)).raw, 403, 'FORBIDDEN');
    expect((await rig.alert(alert.id)).state).toBe('firing');
  });

  it("shows a customer-scoped key its customer's agents' alerts only, counts only those, and 404s others'", async () => {
    const [mine, theirs] = [await rig.customer('SCOPE-A'), await rig.customer('SCOPE-B')];
    const a1 = await firingAlert('scope-a1', mine);
    const a2 = await firingAlert('scope-a2', mine);
    const b1 = await firingAlert('scope-b1', theirs);
    await act(a2.id, 'acknowledge');
    const scopedRead = apiKey((await createKey(rig.t.app, rig.admin, 'read', mine)).key);
    const scopedWrite = apiKey((await createKey(rig.t.app, rig.admin, 'write', mine)).key);

    const seen = await rig.alerts('', scopedRead);
    expect(seen.map((a) => a.id).sort()).toEqual([a1.id, a2.id].sort());
    expect(await rig.alerts(`customer_id=${theirs}`, scopedRead)).toEqual([]);
    expect((await rig.call('GET', '/alerts/summary', undefined, scopedRead)).body).toEqual({ open: 2, firing: 1, acknowledged: 1 });
    const all = (await rig.call<{ open: number }>('GET', '/alerts/summary')).body;
    expect(all.open).toBeGreaterThan(2);

    expectError((await rig.call('GET', `/alerts/${b1.id}`, undefined, scopedRead)).raw, 404, 'NOT_FOUND');
    expectError((await act(b1.id, 'acknowledge', {}, scopedWrite)).raw, 404, 'NOT_FOUND');
    expectError((await act(b1.id, 'resolve', {}, scopedWrite)).raw, 404, 'NOT_FOUND');
    expect((await rig.alert(b1.id)).state).toBe('firing');
    expect((await act(a1.id, 'acknowledge', {}, scopedWrite)).status).toBe(200);
  });

  it('answers 404 for an unknown alert and 400 for bad filter values', async () => {
    for (const [method, url] of [['GET', '/alerts/987654'], ['POST', '/alerts/987654/acknowledge'], ['POST', '/alerts/987654/resolve']] as const) {
      expectError((await rig.call(method, url, method === 'POST' ? {} : undefined)).raw, 404, 'NOT_FOUND');
    }
    for (const query of ['state=bogus', 'from=not-a-date', 'to=yesterday', 'customer_id=abc', 'rule_id=-1', 'limit=0']) {
      expectError((await rig.call('GET', `/alerts?${query}`)).raw, 400, 'VALIDATION_ERROR');
    }
  });
});

describe('the list', () => {
  // Customer L's alerts, fired a minute apart: r1 (resolved), k2 (acknowledged), f3 (firing),
  // r4 (resolved), f5 (firing); r1, r4 and f5 are the same agent's.
  let customer: number;
  let ruleId: number;
  let agents: string[];
  const fired: Record<string, Alert> = {};
  let start: number;

  beforeAll(async () => {
    customer = await rig.customer('LIST-L');
    agents = [await rig.newAgent('list-1', { customerId: customer }), await rig.newAgent('list-2', { customerId: customer }), await rig.newAgent('list-3', { customerId: customer })];
    ruleId = await rig.cpuRule({ customer_id: customer });
    start = rig.clock.now().getTime();
    const plan: Array<[string, number, 'resolve' | 'acknowledge' | null]> = [['r1', 0, 'resolve'], ['k2', 1, 'acknowledge'], ['f3', 2, null], ['r4', 0, 'resolve'], ['f5', 0, null]];
    for (const [name, agent, then] of plan) {
      const before = Object.keys(fired).length;
      await rig.heartbeat(agents[agent]!, 95);
      const latest = (await rig.awaitAlerts(ruleId, before + 1))[0]!;
      fired[name] = latest;
      if (then === 'resolve') {
        await rig.heartbeat(agents[agent]!, 10);
        await vi.waitFor(async () => expect((await rig.alert(latest.id)).state).toBe('resolved'));
      } else if (then === 'acknowledge') {
        expect((await act(latest.id, 'acknowledge')).status).toBe(200);
      }
      await rig.minutes(1);
    }
  });

  const ids = (alerts: Alert[]) => alerts.map((a) => Object.keys(fired).find((k) => fired[k]!.id === a.id) ?? a.id);

  it('puts open alerts first, firing before acknowledged, then resolved ones, newest first within each', async () => {
    expect(ids(await rig.alerts(`customer_id=${customer}`))).toEqual(['f5', 'f3', 'k2', 'r4', 'r1']);
  });

  it('filters by customer, agent, rule, state and firing time', async () => {
    expect(ids(await rig.alerts(`agent_id=${agents[0]}`))).toEqual(['f5', 'r4', 'r1']);
    expect(ids(await rig.alerts(`rule_id=${ruleId}`))).toEqual(['f5', 'f3', 'k2', 'r4', 'r1']);
    const state = (s: string) => rig.alerts(`customer_id=${customer}&state=${s}`).then(ids);
    expect(await state('open')).toEqual(['f5', 'f3', 'k2']);
    expect(await state('firing')).toEqual(['f5', 'f3']);
    expect(await state('acknowledged')).toEqual(['k2']);
    expect(await state('resolved')).toEqual(['r4', 'r1']);
    const at = (m: number) => new Date(start + m * MIN).toISOString();
    // from is inclusive, to exclusive: fired at minutes 1 and 2.
    expect(ids(await rig.alerts(`customer_id=${customer}&from=${at(1)}&to=${at(3)}`))).toEqual(['f3', 'k2']);
    expect(ids(await rig.alerts(`customer_id=${customer}&from=${at(3)}`))).toEqual(['f5', 'r4']);
    expect(ids(await rig.alerts(`agent_id=${agents[0]}&state=resolved&to=${at(1)}`))).toEqual(['r1']);
    expect(await rig.alerts(`customer_id=${customer}&agent_id=${agents[1]}&state=firing`)).toEqual([]);
  });

  it('pages with limit and the Link header: the pages joined are the whole list, in order', async () => {
    const whole = `/api/v1/alerts?customer_id=${customer}`;
    const all = await expectPagesJoinToWhole(rig.t.app, whole, whole, 2, rig.admin);
    expect(all).toHaveLength(5);
    const first = await rig.call<Alert[]>('GET', `/alerts?customer_id=${customer}&limit=2`);
    expect(ids(first.body)).toEqual(['f5', 'f3']);
    expect(String(first.headers.link)).toMatch(/rel="next"/);
  });
});
