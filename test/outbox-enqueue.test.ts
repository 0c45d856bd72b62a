// The notification outbox takes a mass outage in one call: 10,000 agents × 2 channels queue 20,000
// rows (a single INSERT of them broke the protocol's 65,535-parameter limit and rolled back the alerts
// with it), and every row of one channel is due with that channel's message still gathering.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../src/db/create-db.js';
import { enqueue, GROUP_WINDOW_MS } from '../src/modules/notifications/outbox.repo.js';
import { createTestDb } from './helpers/db.js';

let t: DbHandle;
beforeAll(async () => {
  t = await createTestDb();
});
afterAll(() => t?.close());

describe('enqueue', () => {
  it('queues 20,000 rows for two channels, each channel due once, joining a message that is gathering', async () => {
    const channels = await t.db
      .insertInto('notification_channels')
      .values([
        { name: 'a', type: 'webhook', settings: '{}', secret_hints: '{}', updated_at: new Date() },
        { name: 'b', type: 'webhook', settings: '{}', secret_hints: '{}', updated_at: new Date() },
      ])
      .returning('id')
      .execute();
    const [a, b] = channels.map((c) => c.id) as [number, number];
    const now = new Date('2026-08-01T00:00:00Z');
    await enqueue(t.db, [{ channelId: a, alertId: null, event: 'firing', payload: { n: -1 } }], now);
    const later = new Date(now.getTime() + 10_000);
    const rows = Array.from({ length: 10_000 }, (_, n) => [
      { channelId: a, alertId: null, event: 'firing' as const, payload: { n } },
      { channelId: b, alertId: null, event: 'firing' as const, payload: { n } },
    ]).flat();
    await enqueue(t.db, rows, later);
    const dues = await t.db.selectFrom('notification_outbox').select(['channel_id', 'due_at', (eb) => eb.fn.countAll<string>().as('n')]).groupBy(['channel_id', 'due_at']).orderBy('channel_id').execute();
    expect(dues.map((d) => ({ channel: d.channel_id, due: new Date(d.due_at).toISOString(), n: Number(d.n) }))).toEqual([
      // Channel a's message was gathering: its new rows go out with it, 30 s after the first.
      { channel: a, due: new Date(now.getTime() + GROUP_WINDOW_MS).toISOString(), n: 10_001 },
      { channel: b, due: new Date(later.getTime() + GROUP_WINDOW_MS).toISOString(), n: 10_000 },
    ]);
  });
});
