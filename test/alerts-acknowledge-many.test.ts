// Acknowledging many alerts at once (issue 57, item 19): POST /alerts/acknowledge takes the ids of the
// firing alerts shown and acknowledges each as the single call does; one that is no longer firing, or
// belongs to another customer, is reported in `skipped` (as "not found" for another customer's) and
// stays as it was. The audit log names the alerts acknowledged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlertRig } from './helpers/alert-rig.js';
import { apiKey, createKey } from './helpers/identity.js';

let rig: AlertRig;
beforeAll(async () => {
  rig = await AlertRig.start();
});
afterAll(() => rig?.close());

describe('POST /alerts/acknowledge', () => {
  it('acknowledges the firing alerts it names, skips the others with the reason, and is audited once', async () => {
    const mine = await rig.customer('ACK-1');
    const other = await rig.customer('ACK-2');
    const agents = [await rig.newAgent('hot-1', { customerId: mine }), await rig.newAgent('hot-2', { customerId: mine }), await rig.newAgent('hot-3', { customerId: mine }), await rig.newAgent('hot-4', { customerId: other })];
    const ruleId = await rig.cpuRule({});
    for (const id of agents) await rig.heartbeat(id, 99);
    const alerts = await rig.awaitAlerts(ruleId, 4, 'firing');
    const byAgent = new Map(alerts.map((a) => [a.agent_id, a.id]));
    const [a1, a2, a3, a4] = agents.map((id) => byAgent.get(id)!);
    expect((await rig.call('POST', `/alerts/${a3}/resolve`, {})).status).toBe(200);

    // A write key limited to the first customer: the other customer's alert is "not found" to it.
    const scoped = apiKey((await createKey(rig.t.app, rig.admin, 'write', mine)).key);
    const res = await rig.call<{ acknowledged: number[]; skipped: Array<{ id: number; reason: string }> }>('POST', '/alerts/acknowledge', { ids: [a1, a2, a3, a4, a1], comment: 'ISP outage' }, scoped);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.acknowledged.sort()).toEqual([a1, a2].sort());
    expect(res.body.skipped).toEqual([
      { id: a3, reason: expect.stringMatching(/resolved/) },
      { id: a4, reason: 'Alert not found' },
    ]);
    expect(await rig.alert(a1!)).toMatchObject({ state: 'acknowledged', ack_comment: 'ISP outage' });
    expect((await rig.alert(a4!)).state).toBe('firing');
    const audit = (await rig.call<Array<{ action: string; target: string | null }>>('GET', '/audit?action=alert.acknowledge')).body;
    expect(audit.map((e) => e.target)).toContain(`alerts ${[a1, a2].join(', ')}`);
  });

  it('refuses an empty list, more than 500 ids, and read callers', async () => {
    expect((await rig.call('POST', '/alerts/acknowledge', { ids: [] })).status).toBe(400);
    expect((await rig.call('POST', '/alerts/acknowledge', { ids: Array.from({ length: 501 }, (_, i) => i + 1) })).status).toBe(400);
    const reader = apiKey((await createKey(rig.t.app, rig.admin, 'read')).key);
    expect((await rig.call('POST', '/alerts/acknowledge', { ids: [1] }, reader)).status).toBe(403);
  });
});
