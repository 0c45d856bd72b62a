// All SQL of notification channels: rows with their count of pending outbox rows (not yet delivered
// and not given up), and the delivery status each try writes.
import { sql, type Kysely, type Selectable } from 'kysely';
import { keyColumn, keyset, keysetPage, toPage } from '../../db/keyset.js';
import type { ChannelType, Database, NotificationChannelsTable } from '../../db/schema.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { inScopeSql, type CustomerScope } from '../auth/caller.js';

type Db = Kysely<Database>;

export type ChannelRow = Selectable<NotificationChannelsTable> & { pending: number };

export interface ChannelFilter {
  scope: CustomerScope;
  customerId?: number | undefined;
}

export interface ChannelValues {
  name: string;
  enabled: boolean;
  settings: Record<string, unknown>;
  sealed_secrets: string | null;
  secret_hints: Record<string, string>;
}

const BY_ID = keyset([keyColumn('c.id', 'int4')]);

const pending = sql<number>`(select count(*)::int from notification_outbox o where o.channel_id = c.id and o.delivered_at is null and o.failed_at is null)`.as('pending');

const withPending = (db: Db) => db.selectFrom('notification_channels as c').selectAll('c').select(pending);

export async function listChannels(db: Db, f: ChannelFilter, page: PageRequest): Promise<Page<ChannelRow>> {
  const query = withPending(db)
    .$if(f.scope !== null, (q) => q.where(inScopeSql('c.customer_id', f.scope!)))
    .$if(f.customerId !== undefined, (q) => q.where('c.customer_id', '=', f.customerId!));
  return toPage(await keysetPage(query, BY_ID, page).execute(), page.limit);
}

export function findChannel(db: Db, id: number): Promise<ChannelRow | undefined> {
  return withPending(db).where('c.id', '=', id).executeTakeFirst();
}

export async function insertChannel(db: Db, values: ChannelValues & { type: ChannelType; customer_id: number | null; created_at: Date }): Promise<number> {
  const row = await db
    .insertInto('notification_channels')
    .values({ ...values, settings: JSON.stringify(values.settings), secret_hints: JSON.stringify(values.secret_hints), updated_at: values.created_at })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function updateChannel(db: Db, id: number, values: ChannelValues & { updated_at: Date }): Promise<boolean> {
  const result = await db
    .updateTable('notification_channels')
    .set({ ...values, settings: JSON.stringify(values.settings), secret_hints: JSON.stringify(values.secret_hints) })
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteChannel(db: Db, id: number): Promise<boolean> {
  const result = await db.deleteFrom('notification_channels').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The status after one try: failing_since keeps the first failure of a run of failures. */
export async function recordAttempt(db: Db, id: number, at: Date, error: string | null): Promise<void> {
  await db
    .updateTable('notification_channels')
    .set(
      error === null
        ? { last_attempt_at: at, last_delivered_at: at, last_error: null, failing_since: null }
        : { last_attempt_at: at, last_error: error, failing_since: sql<Date>`coalesce(failing_since, ${at}::timestamptz)` },
    )
    .where('id', '=', id)
    .execute();
}
