// Delivery when the receiver is down (issue 31, build 5), on the real server with its background jobs
// on a FakeClock and a real loopback receiver that answers 500 as long as told: tries back off from
// 30 s doubling to 1 h; after 10 tries the message is given up and that shows on the alert
// (delivery_error) and on the channel's status (last_error, failing_since, nothing pending); a receiver
// that recovers before the 10th try gets the message once, with the same x-rmm-delivery on every try,
// and the channel's status clears; and a message being retried is not changed under its delivery id
// by an alert that fired meanwhile (a receiver dropping repeats by that id would lose it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlertRig, itemsOf, MIN, type Alert } from './helpers/alert-rig.js';
import { httpReceiver, type HttpReceiver } from './helpers/notification-receivers.js';

/** Tests that move the FakeClock through many minutes take a while on a loaded machine. */
const LONG = 180_000;

let rig: AlertRig;
let receiver: HttpReceiver;
/** Per path: how many more requests to answer 500 (absent: 200). */
const failures = new Map<string, number>();
/** Per path: the FakeClock's time of each request and the status it was answered with. */
const tries = new Map<string, Array<{ at: number; status: number }>>();

beforeAll(async () => {
  receiver = await httpReceiver((req, res) => {
    const left = failures.get(req.path) ?? 0;
    const status = left > 0 ? 500 : 200;
    if (left > 0) failures.set(req.path, left - 1);
    tries.set(req.path, [...(tries.get(req.path) ?? []), { at: rig.clock.now().getTime(), status }]);
    res.writeHead(status).end(status === 200 ? 'ok' : 'receiver down');
  });
  rig = await AlertRig.start();
});
afterAll(async () => {
  await rig?.close();
  await receiver?.close();
});

interface ChannelStatus {
  last_attempt_at: string | null;
  last_delivered_at: string | null;
  last_error: string | null;
  failing_since: string | null;
  pending: number;
}
const statusOf = async (channelId: number) => (await rig.call<{ status: ChannelStatus }>('GET', `/notification-channels/${channelId}`)).body.status;
const triesAt = (path: string) => tries.get(path) ?? [];

/** A channel at `path` and an alert of a fresh agent that notifies it. */
async function alertTo(path: string): Promise<{ channelId: number; alert: Alert }> {
  const channelId = await rig.webhookChannel(receiver, path);
  const agentId = await rig.newAgent(`host${path.replace(/\//g, '-')}`);
  const ruleId = await rig.cpuRule({ agent_id: agentId }, [channelId]);
  await rig.heartbeat(agentId, 95);
  return { channelId, alert: (await rig.awaitAlerts(ruleId, 1))[0]! };
}

/**
 * Moves time until the receiver has had `count` requests at `path`: in 10 s steps near the channel's
 * next due row, in one jump over the quiet stretches before it (up to 1 h between tries).
 */
async function untilTries(channelId: number, path: string, count: number): Promise<void> {
  const deadline = rig.clock.now().getTime() + 4 * 60 * MIN;
  while (triesAt(path).length < count) {
    expect(rig.clock.now().getTime(), `${count} tries at ${path} within 4 h`).toBeLessThan(deadline);
    const next = await rig.t.db.db
      .selectFrom('notification_outbox')
      .select('due_at')
      .where('channel_id', '=', channelId)
      .where('delivered_at', 'is', null)
      .where('failed_at', 'is', null)
      .orderBy('due_at')
      .executeTakeFirst();
    const wait = next ? next.due_at.getTime() - rig.clock.now().getTime() : 0;
    if (wait > 30_000) await rig.jump(wait - 20_000);
    else await rig.advance(10_000);
  }
}

describe('a receiver that keeps failing', () => {
  it('is tried 10 times, 30 s apart doubling up to 1 h, then given up on the alert and in the channel status', { timeout: LONG }, async () => {
    failures.set('/down', Number.POSITIVE_INFINITY);
    const { channelId, alert } = await alertTo('/down');
    const firedAt = rig.clock.now().getTime();
    await untilTries(channelId, '/down', 10);

    const times = [firedAt, ...triesAt('/down').map((t) => t.at)];
    // The first try after the 30 s grouping window, then 30 s, 1, 2, 4, 8, 16, 32 min, 1 h, 1 h.
    const expected = [30, 30, 60, 120, 240, 480, 960, 1920, 3600, 3600].map((s) => s * 1000);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    gaps.forEach((gap, i) => {
      expect(gap, `gap before try ${i + 1}`).toBeGreaterThanOrEqual(expected[i]!);
      expect(gap, `gap before try ${i + 1}`).toBeLessThan(expected[i]! + 30_000);
      if (i >= 2 && i <= 8) expect(gap, `try ${i + 1} waits longer than try ${i}`).toBeGreaterThan(gaps[i - 1]!);
    });

    await rig.advance(20_000);
    expect((await rig.alert(alert.id)).delivery_error).toMatch(new RegExp(`^notification to channel ${channelId} failed after 10 tries: .*500`));
    const status = await statusOf(channelId);
    expect(status).toMatchObject({ pending: 0, last_delivered_at: null, failing_since: new Date(times[1]!).toISOString(), last_attempt_at: new Date(times[10]!).toISOString() });
    expect(status.last_error).toMatch(/500/);

    await rig.jump(2 * 60 * MIN);
    await rig.minutes(1);
    expect(triesAt('/down'), 'no 11th try').toHaveLength(10);
  });
});

describe('a receiver that recovers before the 10th try', () => {
  it('gets the message once, with the same x-rmm-delivery on every try, and the channel status clears', { timeout: LONG }, async () => {
    failures.set('/flaky', 3);
    const { channelId, alert } = await alertTo('/flaky');
    await untilTries(channelId, '/flaky', 3);
    await rig.advance(10_000);
    const failing = await statusOf(channelId);
    expect(failing).toMatchObject({ pending: 1, last_delivered_at: null, failing_since: new Date(triesAt('/flaky')[0]!.at).toISOString() });
    expect(failing.last_error).toMatch(/500/);

    await untilTries(channelId, '/flaky', 4);
    await rig.advance(10_000);
    expect(triesAt('/flaky').map((t) => t.status)).toEqual([500, 500, 500, 200]);
    const requests = receiver.requests.filter((r) => r.path === '/flaky');
    expect(new Set(requests.map((r) => r.headers['x-rmm-delivery'])).size).toBe(1);
    expect(new Set(requests.map((r) => r.body)).size, 'every try carries the same message').toBe(1);
    expect(itemsOf(receiver, '/flaky').filter((i) => i.alert_id === alert.id)).toHaveLength(4);

    expect(await statusOf(channelId)).toMatchObject({ pending: 0, last_error: null, failing_since: null, last_delivered_at: new Date(triesAt('/flaky')[3]!.at).toISOString() });
    expect((await rig.alert(alert.id)).delivery_error).toBeNull();
    await rig.jump(2 * 60 * MIN);
    await rig.minutes(1);
    expect(triesAt('/flaky'), 'delivered once, never again').toHaveLength(4);
  });
});

describe('a message being retried', () => {
  it('keeps its items under its delivery id; an alert fired meanwhile goes out under another', { timeout: LONG }, async () => {
    failures.set('/busy', 1);
    const { channelId, alert: first } = await alertTo('/busy');
    await untilTries(channelId, '/busy', 1);
    // Fired right after the failed try: its row falls due 30 s later, the retry about then too. The
    // dispatcher's next pass comes once both are due (here: after a 40 s stall; in real time: any
    // poll where both have fallen due), and claims them together.
    const agentId = await rig.newAgent('busy-second');
    const ruleId = await rig.cpuRule({ agent_id: agentId }, [channelId]);
    await rig.heartbeat(agentId, 95);
    const [second] = await rig.awaitAlerts(ruleId, 1);
    await rig.idle();
    rig.clock.set(new Date(rig.clock.now().getTime() + 40_000));
    await untilTries(channelId, '/busy', 2);
    await rig.minutes(1);

    const requests = receiver.requests.filter((r) => r.path === '/busy');
    const messages = requests.map((r) => ({ delivery: r.headers['x-rmm-delivery'], alerts: (JSON.parse(r.body) as { alerts: Array<{ alert_id: number }> }).alerts.map((a) => a.alert_id) }));
    const byDelivery = new Map<unknown, string>();
    for (const m of messages) {
      const seen = byDelivery.get(m.delivery);
      if (seen !== undefined) expect(m.alerts.join(), `delivery ${String(m.delivery)} changed between tries`).toBe(seen);
      byDelivery.set(m.delivery, m.alerts.join());
    }
    expect(messages.flatMap((m) => m.alerts).sort()).toEqual(expect.arrayContaining([first.id, second!.id]));
    expect(messages.find((m) => m.alerts.includes(second!.id))!.delivery).not.toBe(messages[0]!.delivery);
  });
});
