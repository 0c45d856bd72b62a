// What reaches the on-call channel besides "firing" (issue 31), on the real server with its background
// jobs on a FakeClock and a real webhook receiver on loopback: a resolution by hand names who and why;
// an offline alert resolved by hand while the agent is still away fires again (a new alert) at the
// next monitor pass; reminders come every ~N minutes while an alert fires unacknowledged, stop once it
// is acknowledged, and never come for a rule without reminders; alerts within 30 s of each other reach
// one channel as one message listing them all, while another channel gets its own message.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AlertRig, itemsOf, MIN, type Alert } from './helpers/alert-rig.js';
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

const eventsFor = (alertId: number) => itemsOf(receiver).filter((i) => i.alert_id === alertId);

describe('resolving by hand', () => {
  // The server runs without PUBLIC_URL: links come from the settings' backend_url, read before the
  // alert's transaction (read inside it, it waited forever for PGlite's one connection).
  it('tells the channel it was resolved, by whom and why, with the link from the settings', async () => {
    expect((await rig.call('PUT', '/settings', { backend_url: 'https://console.example.net/' })).status).toBe(200);
    const channelId = await rig.webhookChannel(receiver, '/by-hand');
    const agentId = await rig.newAgent('by-hand-host');
    const ruleId = await rig.cpuRule({ agent_id: agentId }, [channelId]);
    await rig.heartbeat(agentId, 97);
    const [alert] = await rig.awaitAlerts(ruleId, 1);
    await rig.minutes(1);
    const res = await rig.call<Alert>('POST', `/alerts/${alert!.id}/resolve`, { comment: 'fan replaced' });
    expect(res.body).toMatchObject({ state: 'resolved', resolved_by: 'admin', resolve_comment: 'fan replaced' });
    await rig.minutes(1);
    const items = eventsFor(alert!.id);
    expect(items.map((i) => i.event)).toEqual(['firing', 'resolved']);
    expect(items[0]).toMatchObject({ by: null, comment: null });
    expect(items[1]).toMatchObject({ by: 'admin', comment: 'fan replaced', agent: { id: agentId, hostname: 'by-hand-host' } });
    expect(items.map((i) => i.link)).toEqual([`https://console.example.net/agents/${agentId}`, `https://console.example.net/agents/${agentId}`]);
  });

  it('fires a new offline alert at the next monitor pass when the agent is still offline', { timeout: LONG }, async () => {
    const channelId = await rig.webhookChannel(receiver, '/offline-again');
    const agentId = await rig.newAgent('still-away');
    const ruleId = await rig.rule({ name: 'Offline', kind: 'agent_offline', agent_id: agentId, params: { minutes: 5 }, channel_ids: [channelId] });
    await rig.heartbeat(agentId);
    await rig.minutes(7);
    const [first] = await rig.awaitAlerts(ruleId, 1, 'firing');
    expect((await rig.call('POST', `/alerts/${first!.id}/resolve`, { comment: 'should be back' })).status).toBe(200);
    await rig.minutes(1);
    const alerts = await rig.awaitAlerts(ruleId, 2);
    expect(alerts.map((a) => [a.state, a.resolved_by])).toEqual([
      ['firing', null],
      ['resolved', 'admin'],
    ]);
    expect(alerts[0]!.id).not.toBe(first!.id);
    expect(alerts[0]!.summary).toMatch(/^Offline: no heartbeat for \d+ min/);
    await rig.minutes(1);
    expect(eventsFor(alerts[0]!.id).map((i) => i.event)).toEqual(['firing']);
  });
});

describe('reminders', () => {
  it('come every ~10 minutes while firing unacknowledged, stop once acknowledged, never without reminder_minutes', { timeout: LONG }, async () => {
    const channelId = await rig.webhookChannel(receiver, '/reminders');
    const [loud, quiet] = [await rig.newAgent('remind-me'), await rig.newAgent('no-reminders')];
    const loudRule = await rig.cpuRule({ agent_id: loud }, [channelId], { reminder_minutes: 10 });
    const quietRule = await rig.cpuRule({ agent_id: quiet }, [channelId]);
    await rig.heartbeat(loud, 95);
    await rig.heartbeat(quiet, 95);
    const [reminded] = await rig.awaitAlerts(loudRule, 1);
    const [silent] = await rig.awaitAlerts(quietRule, 1);
    const firedAt = rig.clock.now().getTime();

    await rig.minutes(35);
    const reminders = eventsFor(reminded!.id).filter((i) => i.event === 'reminder');
    expect(reminders).toHaveLength(3);
    const times = [firedAt, ...reminders.map((r) => Date.parse(r.at))];
    for (let i = 1; i < times.length; i++) {
      const gap = times[i]! - times[i - 1]!;
      expect(gap, `reminder ${i}`).toBeGreaterThanOrEqual(10 * MIN);
      expect(gap, `reminder ${i}`).toBeLessThanOrEqual(11 * MIN);
    }
    expect(reminders[0]).toMatchObject({ summary: reminded!.summary, by: null });
    expect(eventsFor(silent!.id).map((i) => i.event)).toEqual(['firing']);

    expect((await rig.call('POST', `/alerts/${reminded!.id}/acknowledge`, { comment: 'on it' })).status).toBe(200);
    await rig.minutes(25);
    expect(eventsFor(reminded!.id).filter((i) => i.event === 'reminder')).toHaveLength(3);
    expect(eventsFor(silent!.id).map((i) => i.event)).toEqual(['firing']);
  });
});

describe('grouping', () => {
  it('sends three alerts fired within 30 s to one channel as ONE message, and a second channel its own', { timeout: LONG }, async () => {
    const [first, second] = [await rig.webhookChannel(receiver, '/group-one'), await rig.webhookChannel(receiver, '/group-two')];
    const customer = await rig.customer('GROUP-1');
    const hosts = ['grp-a', 'grp-b', 'grp-c'];
    const agents = [];
    for (const h of hosts) agents.push(await rig.newAgent(h, { customerId: customer }));
    const elsewhere = await rig.newAgent('grp-other');
    const groupRule = await rig.cpuRule({ customer_id: customer }, [first]);
    const otherRule = await rig.cpuRule({ agent_id: elsewhere }, [second]);
    const sentBefore = receiver.requests.length;

    // Fired at 0, 10 and 20 s; the other channel's alert at 10 s.
    for (let i = 0; i < 3; i++) {
      await rig.heartbeat(agents[i]!, 95);
      await rig.awaitAlerts(groupRule, i + 1);
      if (i === 1) {
        await rig.heartbeat(elsewhere, 95);
        await rig.awaitAlerts(otherRule, 1);
      }
      if (i < 2) await rig.advance(10_000);
    }
    await rig.advance(5_000);
    expect(receiver.requests.slice(sentBefore).map((r) => r.path), 'nothing before 30 s').toEqual([]);
    await rig.minutes(2);

    const toFirst = receiver.requests.filter((r) => r.path === '/group-one');
    expect(toFirst).toHaveLength(1);
    const grouped = itemsOf(receiver, '/group-one');
    expect(grouped.map((i) => [i.event, i.agent.hostname]).sort()).toEqual(hosts.map((h) => ['firing', h]));
    const toSecond = receiver.requests.filter((r) => r.path === '/group-two');
    expect(toSecond).toHaveLength(1);
    expect(itemsOf(receiver, '/group-two').map((i) => [i.event, i.agent.hostname])).toEqual([['firing', 'grp-other']]);
    expect(toSecond[0]!.headers['x-rmm-delivery']).not.toBe(toFirst[0]!.headers['x-rmm-delivery']);
    await vi.waitFor(async () => {
      const status = (await rig.call<{ status: { pending: number; last_error: string | null } }>('GET', `/notification-channels/${first}`)).body.status;
      expect(status).toMatchObject({ pending: 0, last_error: null });
    });
  });
});
