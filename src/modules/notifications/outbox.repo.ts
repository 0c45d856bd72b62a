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

/**
 * Queues one item per channel. The row is due with the channel's earliest message that has not been
 * tried yet, or GROUP_WINDOW_MS from now when none is gathering.
 */
export async function enqueue(
  db: Db,
  rows: ReadonlyArray<{ channelId: number; alertId: number | null; event: NotificationEvent; payload: object }>,
  now: Date,
): Promise<void> {
  if (rows.length === 0) return;
  const fallbackDue = new Date(now.getTime() + GROUP_WINDOW_MS);
  const values = rows.map((r) => sql`(${r.channelId}::int, ${r.alertId}::int, ${r.event}::text, ${JSON.stringify(r.payload)}::jsonb)`);
  await sql`
    insert into notification_outbox (channel_id, alert_id, event, payload, created_at, due_at)
    select v.channel_id, v.alert_id, v.event, v.payload, ${now}::timestamptz,
           coalesce((select min(o.due_at) from notification_outbox o
                     where o.channel_id = v.channel_id and o.attempts = 0 and o.delivered_at is null
                       and o.failed_at is null and o.claimed_until is null and o.due_at > ${now}::timestamptz),
                    ${fallbackDue}::timestamptz)
    from (values ${sql.join(values)}) as v(channel_id, alert_id, event, payload)`.execute(db);
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
