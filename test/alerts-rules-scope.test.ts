// Which agents a rule watches, and rules that stop watching (issue 31, build 2), on the real server
// with its background jobs on a FakeClock and a real webhook receiver: a customer rule covers that
// customer's agents only (thresholds from the heartbeat path and offline from the monitor pass alike);
// a disabled rule never fires, and switching one off resolves its open alerts; deleting a rule resolves its open alerts by hand (who, and why) and
// tells its channel.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AlertRig, itemsOf } from './helpers/alert-rig.js';
import { httpReceiver, type HttpReceiver } from './helpers/notification-receivers.js';

/** Tests that move the FakeClock through many minutes take a while on a loaded machine. */
const LONG = 120_000;

let rig: AlertRig;
let receiver: HttpReceiver;

beforeAll(async () => {
  receiver = await httpReceiver();
  rig = await AlertRig.start();
});
afterAll(async () => {
  await rig?.close();
  await receiver?.close();
});

describe('a customer rule', () => {
  it("covers that customer's agents only, for thresholds and for offline", { timeout: LONG }, async () => {
    const [mine, other] = [await rig.customer('RULE-C'), await rig.customer('RULE-D')];
    const inside = await rig.newAgent('cust-inside', { customerId: mine });
    const elsewhere = await rig.newAgent('cust-elsewhere', { customerId: other });
    const unassigned = await rig.newAgent('cust-unassigned');
    const cpuRule = await rig.cpuRule({ customer_id: mine });
    const offlineRule = await rig.rule({ name: 'Customer offline', kind: 'agent_offline', customer_id: mine, params: { minutes: 5 } });

    // The others' heartbeats go first; once the customer's agent has its alert, theirs were evaluated.
    await rig.heartbeat(elsewhere, 99);
    await rig.heartbeat(unassigned, 99);
    await rig.heartbeat(inside, 95);
    const [hot] = await rig.awaitAlerts(cpuRule, 1);
    expect(hot).toMatchObject({ agent_id: inside, customer_id: mine, state: 'firing' });

    // All three go quiet: only the customer's agent is reported offline.
    await rig.minutes(7);
    const [away] = await rig.awaitAlerts(offlineRule, 1);
    expect(away).toMatchObject({ agent_id: inside, kind: 'agent_offline' });
    await rig.minutes(2);
    expect((await rig.alerts(`rule_id=${offlineRule}`)).map((a) => a.agent_id)).toEqual([inside]);
    expect((await rig.alerts(`rule_id=${cpuRule}`)).map((a) => a.agent_id)).toEqual([inside]);
  });
});

describe('a disabled rule', () => {
  it('never fires, while an enabled rule on the same agent does', { timeout: LONG }, async () => {
    const agentId = await rig.newAgent('disabled-host');
    const enabled = await rig.cpuRule({ agent_id: agentId });
    const disabledCpu = await rig.cpuRule({ agent_id: agentId }, [], { enabled: false });
    const disabledOffline = await rig.rule({ name: 'Off', kind: 'agent_offline', agent_id: agentId, enabled: false, params: { minutes: 5 } });
    await rig.heartbeat(agentId, 99);
    await rig.awaitAlerts(enabled, 1);
    await rig.minutes(8);
    expect(await rig.alerts(`rule_id=${disabledCpu}`)).toEqual([]);
    expect(await rig.alerts(`rule_id=${disabledOffline}`)).toEqual([]);
    expect(await rig.alerts(`agent_id=${agentId}`)).toHaveLength(1);
  });
});

describe('switching a rule off', () => {
  it('resolves its open alerts at the next timer pass, since nothing evaluates them any more', { timeout: LONG }, async () => {
    const agentId = await rig.newAgent('switched-off-host');
    const ruleId = await rig.cpuRule({ agent_id: agentId });
    await rig.heartbeat(agentId, 99);
    const [alert] = await rig.awaitAlerts(ruleId, 1);
    const rule = (await rig.call<Record<string, unknown>>('GET', `/alert-rules/${ruleId}`)).body;
    const { id: _id, created_at: _c, updated_at: _u, ...body } = rule;
    expect((await rig.call('PUT', `/alert-rules/${ruleId}`, { ...body, enabled: false })).status).toBe(200);
    await rig.minutes(2);
    expect(await rig.alert(alert!.id)).toMatchObject({ state: 'resolved', resolved_by: null, resolve_comment: 'the rule was disabled' });
  });
});

describe('deleting a rule', () => {
  it('resolves its open alerts, naming who and why, and tells its channel', async () => {
    const channelId = await rig.webhookChannel(receiver, '/deleted-rule');
    const agentId = await rig.newAgent('deleted-rule-host');
    const ruleId = await rig.cpuRule({ agent_id: agentId }, [channelId]);
    await rig.heartbeat(agentId, 99);
    const [alert] = await rig.awaitAlerts(ruleId, 1);
    await rig.minutes(1);
    const firing = async () => (await rig.call<{ firing: number }>('GET', '/alerts/summary')).body.firing;
    const firingBefore = await firing();

    expect((await rig.call('DELETE', `/alert-rules/${ruleId}`)).status).toBe(200);
    const after = await rig.alert(alert!.id);
    expect(after).toMatchObject({ state: 'resolved', resolved_by: 'admin', resolve_comment: 'the rule was deleted', rule_id: null });
    expect(await firing()).toBe(firingBefore - 1);
    await rig.minutes(1);
    await vi.waitFor(() => expect(itemsOf(receiver, '/deleted-rule').map((i) => [i.event, i.by])).toEqual([['firing', null], ['resolved', 'admin']]));
    // The agent stays hot, but nothing watches it any more.
    await rig.heartbeat(agentId, 99);
    await rig.minutes(1);
    expect(await rig.alerts(`agent_id=${agentId}`)).toHaveLength(1);
  });
});
