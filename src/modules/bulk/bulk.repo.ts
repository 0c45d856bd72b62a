// All SQL of bulk actions and their per-agent results.
import { sql, type Kysely, type Selectable } from 'kysely';
import { keyColumn, keyset, keysetPage, toPage } from '../../db/keyset.js';
import type { BulkActionResultsTable, BulkActionsTable, BulkResultStatus, Database, Platform } from '../../db/schema.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { inScopeSql, type CustomerScope } from '../auth/caller.js';

type Db = Kysely<Database>;

export type BulkActionRow = Selectable<BulkActionsTable>;
export type BulkResultRow = Omit<Selectable<BulkActionResultsTable>, 'claimed_by' | 'lease_until'>;
/** A result row the runner works on, with what its action says. */
export type OpenResult = BulkResultRow & Pick<BulkActionRow, 'action' | 'params' | 'actor_type' | 'actor' | 'expires_at'> & { platform: Platform | null };

const RESULT_COLUMNS = ['r.id', 'r.bulk_id', 'r.agent_id', 'r.agent_name', 'r.status', 'r.result', 'r.error', 'r.history_id', 'r.started_at', 'r.finished_at'] as const;
const OPEN_COLUMNS = [...RESULT_COLUMNS, 'b.action', 'b.params', 'b.actor_type', 'b.actor', 'b.expires_at', 'a.platform'] as const;

export async function insertAction(
  db: Db,
  action: Omit<BulkActionRow, 'id' | 'params' | 'target'> & { params: Record<string, unknown>; target: Record<string, unknown> },
  agents: ReadonlyArray<{ id: string; name: string }>,
  initial: (agent: { id: string }) => { status: BulkResultStatus; finished_at: Date | null; error: string | null },
): Promise<BulkActionRow> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('bulk_actions')
      .values({ ...action, params: JSON.stringify(action.params), target: JSON.stringify(action.target) })
      .returningAll()
      .executeTakeFirstOrThrow();
    for (let i = 0; i < agents.length; i += 1000) {
      await trx
        .insertInto('bulk_action_results')
        .values(agents.slice(i, i + 1000).map((a) => ({ bulk_id: row.id, agent_id: a.id, agent_name: a.name, ...initial(a) })))
        .execute();
    }
    return row;
  });
}

const NEWEST_FIRST = keyset([keyColumn('id', 'int8')], true);

export async function listActions(db: Db, scope: CustomerScope, page: PageRequest): Promise<Page<BulkActionRow>> {
  const query = db
    .selectFrom('bulk_actions')
    .selectAll()
    .$if(scope !== null, (q) => q.where(inScopeSql('scope_customer_id', scope!)));
  return toPage(await keysetPage(query, NEWEST_FIRST, page).execute(), page.limit);
}

export function findAction(db: Db, id: number): Promise<BulkActionRow | undefined> {
  return db.selectFrom('bulk_actions').selectAll().where('id', '=', id).executeTakeFirst();
}

export function resultsOf(db: Db, bulkId: number): Promise<BulkResultRow[]> {
  return db.selectFrom('bulk_action_results as r').select(RESULT_COLUMNS).where('r.bulk_id', '=', bulkId).orderBy('r.id').execute();
}

/** Result counts by status, per action. */
export async function countsOf(db: Db, bulkIds: readonly number[]): Promise<Map<number, Partial<Record<BulkResultStatus, number>>>> {
  const counts = new Map<number, Partial<Record<BulkResultStatus, number>>>();
  if (bulkIds.length === 0) return counts;
  const rows = await db
    .selectFrom('bulk_action_results')
    .select(['bulk_id', 'status', (eb) => eb.fn.countAll<string>().as('n')])
    .where('bulk_id', 'in', bulkIds)
    .groupBy(['bulk_id', 'status'])
    .execute();
  for (const row of rows) counts.set(Number(row.bulk_id), { ...counts.get(Number(row.bulk_id)), [row.status]: Number(row.n) });
  return counts;
}

/** Waiting rows of actions that have not expired, oldest first. */
export function waitingRows(db: Db, now: Date, limit: number): Promise<OpenResult[]> {
  return db
    .selectFrom('bulk_action_results as r')
    .innerJoin('bulk_actions as b', 'b.id', 'r.bulk_id')
    .innerJoin('agents as a', 'a.id', 'r.agent_id')
    .select(OPEN_COLUMNS)
    .where('r.status', '=', 'waiting')
    .where('b.expires_at', '>', now)
    .orderBy('r.id')
    .limit(limit)
    .execute();
}

/** Claims waiting rows for this instance; the rows another instance took first are left out. */
export async function claim(db: Db, ids: readonly number[], instance: string, now: Date, leaseUntil: Date): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .updateTable('bulk_action_results')
    .set({ status: 'running', claimed_by: instance, lease_until: leaseUntil, started_at: now })
    .where('id', 'in', ids)
    .where('status', '=', 'waiting')
    .returning('id')
    .execute();
  return rows.map((r) => Number(r.id));
}

export async function renewLeases(db: Db, ids: readonly number[], instance: string, leaseUntil: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('bulk_action_results').set({ lease_until: leaseUntil }).where('id', 'in', ids).where('claimed_by', '=', instance).execute();
}

export async function finishResult(
  db: Db,
  id: number,
  outcome: { status: BulkResultStatus; result: Record<string, unknown> | null; error: string | null; history_id: number | null; finished_at: Date | null },
): Promise<void> {
  await db
    .updateTable('bulk_action_results')
    .set({ ...outcome, result: outcome.result === null ? null : JSON.stringify(outcome.result), claimed_by: null, lease_until: null, ...(outcome.status === 'waiting' ? { started_at: null } : {}) })
    .where('id', '=', id)
    .execute();
}

/** Waiting rows of expired actions end as not connected; running rows whose lease ran out (their server stopped) as failed. */
export async function closeOverdue(db: Db, now: Date): Promise<void> {
  await sql`
    update bulk_action_results r set status = 'not_connected', finished_at = ${now},
      error = 'The agent did not connect before the action expired'
    from bulk_actions b
    where b.id = r.bulk_id and r.status = 'waiting' and b.expires_at <= ${now}`.execute(db);
  await db
    .updateTable('bulk_action_results')
    .set({ status: 'failed', finished_at: now, error: 'The server running it stopped before the agent answered', claimed_by: null, lease_until: null })
    .where('status', '=', 'running')
    .where('lease_until', '<', now)
    .execute();
}

/** Ends the waiting rows of an action; running ones finish. */
export async function cancelWaiting(db: Db, bulkId: number, now: Date): Promise<number> {
  const result = await db
    .updateTable('bulk_action_results')
    .set({ status: 'cancelled', finished_at: now, error: 'Cancelled before the agent connected' })
    .where('bulk_id', '=', bulkId)
    .where('status', '=', 'waiting')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
