// All SQL of maintenance windows. A window row comes with the customer it belongs to (its own, or its
// agent's) for scope checks. Windows are few (tens), so lists are read whole and filtered on "active
// now" in the service; the engine's matcher reads the timing columns of every window in one query.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { inScopeSql, type CustomerScope } from '../auth/caller.js';

type Db = Kysely<Database>;

export interface WindowRow {
  id: number;
  name: string;
  customer_id: number | null;
  agent_id: string | null;
  starts_at: Date | null;
  ends_at: Date | null;
  cron: string | null;
  duration_minutes: number | null;
  created_at: Date;
  updated_at: Date;
  /** The window's customer, or its agent's; null for global windows and windows of unassigned agents. */
  owner_customer_id: number | null;
}

export interface WindowValues {
  name: string;
  customer_id: number | null;
  agent_id: string | null;
  starts_at: Date | null;
  ends_at: Date | null;
  cron: string | null;
  duration_minutes: number | null;
}

export interface WindowFilter {
  /** A scoped caller's customer: its windows, its agents' windows and the global ones. */
  scope: CustomerScope;
  /** Windows of this customer: its own and its agents'. */
  customerId?: number | undefined;
  agentId?: string | undefined;
}

/** What deciding coverage needs of a window. */
export type WindowTimingRow = Pick<WindowRow, 'id' | 'name' | 'customer_id' | 'agent_id' | 'starts_at' | 'ends_at' | 'cron' | 'duration_minutes'>;

const TIMING_COLUMNS = ['id', 'name', 'customer_id', 'agent_id', 'starts_at', 'ends_at', 'cron', 'duration_minutes'] as const;

function windows(db: Db) {
  return db
    .selectFrom('maintenance_windows as w')
    .leftJoin('agents as a', 'a.id', 'w.agent_id')
    .selectAll('w')
    .select(sql<number | null>`coalesce(w.customer_id, a.customer_id)`.as('owner_customer_id'));
}

/** Every window matching the filter, by id. */
export function listWindows(db: Db, f: WindowFilter): Promise<WindowRow[]> {
  return windows(db)
    .$if(f.scope !== null, (q) => q.where(sql<boolean>`(${inScopeSql(sql`coalesce(w.customer_id, a.customer_id)`, f.scope!)} or (w.customer_id is null and w.agent_id is null))`))
    .$if(f.customerId !== undefined, (q) => q.where(sql<boolean>`coalesce(w.customer_id, a.customer_id) = ${f.customerId}`))
    .$if(f.agentId !== undefined, (q) => q.where('w.agent_id', '=', f.agentId!))
    .orderBy('w.id')
    .execute();
}

export function findWindow(db: Db, id: number): Promise<WindowRow | undefined> {
  return windows(db).where('w.id', '=', id).executeTakeFirst();
}

/** Every window's timing, by id: one query for a whole evaluation pass. */
export function allWindowTimings(db: Db): Promise<WindowTimingRow[]> {
  return db.selectFrom('maintenance_windows').select(TIMING_COLUMNS).orderBy('id').execute();
}

/** The windows that can cover this agent: its own, its customer's and the global ones, by id. */
export function windowTimingsFor(db: Db, agent: { id: string; customer_id: number | null }): Promise<WindowTimingRow[]> {
  return db
    .selectFrom('maintenance_windows')
    .select(TIMING_COLUMNS)
    .where((eb) =>
      eb.or([
        eb('agent_id', '=', agent.id),
        ...(agent.customer_id === null ? [] : [eb('customer_id', '=', agent.customer_id)]),
        eb.and([eb('customer_id', 'is', null), eb('agent_id', 'is', null)]),
      ]),
    )
    .orderBy('id')
    .execute();
}

export async function insertWindow(db: Db, values: WindowValues, now: Date): Promise<number> {
  const row = await db
    .insertInto('maintenance_windows')
    .values({ ...values, created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Replaces the window's fields; false when it no longer exists. */
export async function updateWindow(db: Db, id: number, values: WindowValues, now: Date): Promise<boolean> {
  const result = await db.updateTable('maintenance_windows').set({ ...values, updated_at: now }).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteWindow(db: Db, id: number): Promise<void> {
  await db.deleteFrom('maintenance_windows').where('id', '=', id).execute();
}
