// All SQL of the notification outbox: queuing an alert event for a channel (joining the channel's
// message that is still gathering, so events within 30 s go out as one), claiming due rows with
// FOR UPDATE SKIP LOCKED (two instances never send the same row), and recording what became of a try.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, NotificationEvent, NotificationOutboxTable } from '../../db/schema.js';

type Db = Kysely<Database>;

export type OutboxRow = Selectable<NotificationOutboxTable>;

/** Events to one channel within this time are sent as one message. */
export const GROUP_WINDOW_MS = 30_000;
/** A claimed row whose sender died is claimable again after this. */
const CLAIM_MS = 120_000;

/** Rows per INSERT: 6 parameters a row stays far below the protocol's 65,535 (a mass outage queues 10,000s). */
const INSERT_CHUNK = 1_000;

/**
 * Queues one item per channel. The row is due with the channel's earliest message that has not been
 * tried yet, or GROUP_WINDOW_MS from now when none is gathering (one lookup per channel, not per row).
 */
export async function enqueue(
  db: Db,
  rows: ReadonlyArray<{ channelId: number; alertId: number | null; event: NotificationEvent; payload: object }>,
  now: Date,
): Promise<void> {
  if (rows.length === 0) return;
  const channels = [...new Set(rows.map((r) => r.channelId))];
  const gathering = await db
    .selectFrom('notification_outbox')
    .select(['channel_id', (eb) => eb.fn.min('due_at').as('due_at')])
    .where('channel_id', 'in', channels)
    .where('attempts', '=', 0)
    .where('delivered_at', 'is', null)
    .where('failed_at', 'is', null)
    .where('claimed_until', 'is', null)
    .where('due_at', '>', now)
    .groupBy('channel_id')
    .execute();
  const dueOf = new Map(gathering.map((g) => [g.channel_id, new Date(g.due_at)]));
  const fallbackDue = new Date(now.getTime() + GROUP_WINDOW_MS);
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await db
      .insertInto('notification_outbox')
      .values(
        rows.slice(i, i + INSERT_CHUNK).map((r) => ({
          channel_id: r.channelId,
          alert_id: r.alertId,
          event: r.event,
          payload: JSON.stringify(r.payload),
          created_at: now,
          due_at: dueOf.get(r.channelId) ?? fallbackDue,
        })),
      )
      .execute();
  }
}

/** Claims up to `limit` due rows (oldest first); the caller sends them and records the outcome. */
export async function claimDue(db: Db, now: Date, limit = 500): Promise<OutboxRow[]> {
  const claimedUntil = new Date(now.getTime() + CLAIM_MS);
  const { rows } = await sql<OutboxRow>`
    update notification_outbox set claimed_until = ${claimedUntil}
    where id in (
      select id from notification_outbox
      where delivered_at is null and failed_at is null and due_at <= ${now}
        and (claimed_until is null or claimed_until < ${now})
      order by due_at, id
      limit ${limit}
      for update skip locked)
    returning *`.execute(db);
  return rows.sort((a, b) => a.id - b.id);
}

export async function markDelivered(db: Db, ids: readonly number[], deliveryId: string, at: Date): Promise<void> {
  await db.updateTable('notification_outbox').set({ delivered_at: at, delivery_id: deliveryId, claimed_until: null, last_error: null }).where('id', 'in', ids).execute();
}

/** A failed try: due again after `retryAt`, or given up (failed_at) when `retryAt` is null. */
export async function markFailed(db: Db, ids: readonly number[], deliveryId: string, error: string, at: Date, retryAt: Date | null): Promise<void> {
  await db
    .updateTable('notification_outbox')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      delivery_id: deliveryId,
      claimed_until: null,
      last_error: error,
      ...(retryAt ? { due_at: retryAt } : { failed_at: at }),
    }))
    .where('id', 'in', ids)
    .execute();
}

/** Whether each channel is enabled; rows of deleted channels are gone with them (cascade). */
export async function channelStates(db: Db, channelIds: readonly number[]): Promise<Map<number, { enabled: boolean }>> {
  if (channelIds.length === 0) return new Map();
  const rows = await db.selectFrom('notification_channels').select(['id', 'enabled']).where('id', 'in', [...new Set(channelIds)]).execute();
  return new Map(rows.map((r) => [r.id, { enabled: r.enabled }]));
}
