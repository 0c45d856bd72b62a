// All SQL of firmware and the update channel: firmware rows naming their binary in the blob store by
// SHA-256, the agents' update_requested column and the updater's latest report on the agent row.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, FirmwareTable, UpdaterState } from '../../db/schema.js';
import { inScopeSql, type CustomerScope } from '../auth/caller.js';

type Db = Kysely<Database>;

export type FirmwareRow = Selectable<FirmwareTable>;

export function findFirmware(db: Db, platform: string, version: string): Promise<FirmwareRow | undefined> {
  return db.selectFrom('firmware').selectAll().where('platform', '=', platform).where('version', '=', version).executeTakeFirst();
}

export function listFirmware(db: Db, platform?: string): Promise<FirmwareRow[]> {
  return db
    .selectFrom('firmware')
    .selectAll()
    .$if(platform !== undefined, (q) => q.where('platform', '=', platform!))
    .execute();
}

/** Inserts the row; on an existing version+platform replaces it when `replace`, else returns undefined. */
export function saveFirmware(db: Db, row: Omit<FirmwareRow, 'id'>, replace: boolean): Promise<FirmwareRow | undefined> {
  return db
    .insertInto('firmware')
    .values(row)
    .onConflict((oc) =>
      replace
        ? oc.columns(['platform', 'version']).doUpdateSet({ sha256: row.sha256, size: row.size, created_at: row.created_at, signature: row.signature })
        : oc.doNothing(),
    )
    .returningAll()
    .executeTakeFirst();
}

/** Deletes one firmware row; returns it, or undefined when there was none with that id. */
export function deleteFirmware(db: Db, id: number): Promise<FirmwareRow | undefined> {
  return db.deleteFrom('firmware').where('id', '=', id).returningAll().executeTakeFirst();
}

/** Whether any firmware or installer row still names this blob (both live in one blob store). */
export async function isBlobReferenced(db: Db, sha256: string): Promise<boolean> {
  const [installer, firmware] = await Promise.all([
    db.selectFrom('installers').select('platform').where('sha256', '=', sha256).limit(1).executeTakeFirst(),
    db.selectFrom('firmware').select('id').where('sha256', '=', sha256).limit(1).executeTakeFirst(),
  ]);
  return installer !== undefined || firmware !== undefined;
}

/** The flag's time for a set: kept when it was already set (a repeated request does not restart the wait), else `at`. */
const requestedSince = (at: Date) => sql<Date>`case when update_requested then coalesce(update_requested_at, ${at}::timestamptz) else ${at}::timestamptz end`;

export async function setUpdateRequested(db: Db, agentId: string, requested: boolean, at: Date): Promise<void> {
  await db
    .updateTable('agents')
    .set(requested ? { update_requested: true, update_requested_at: requestedSince(at) } : { update_requested: false, update_requested_at: null })
    .where('id', '=', agentId)
    .execute();
}

/** Sets the flag of many agents in one statement (a bulk action's request_update). */
export async function requestUpdateOf(db: Db, agentIds: readonly string[], at: Date): Promise<void> {
  if (agentIds.length === 0) return;
  await db.updateTable('agents').set({ update_requested: true, update_requested_at: requestedSince(at) }).where('id', 'in', agentIds).execute();
}

/**
 * Clears the flag of an agent that runs the latest firmware, unless its updater said it is still checking
 * that firmware (`installing`): the updater clears it once the health window has passed, and a
 * heartbeat of the new binary alone is not that.
 */
export async function clearUpdateRequestUnlessChecking(db: Db, agentId: string): Promise<void> {
  await db
    .updateTable('agents')
    .set({ update_requested: false, update_requested_at: null })
    .where('id', '=', agentId)
    .where((eb) => eb.or([eb('updater_state', 'is', null), eb('updater_state', '!=', 'installing')]))
    .execute();
}

/** Flags every agent of the scope (all agents when unscoped); returns how many. */
export async function requestUpdateForAll(db: Db, scope: CustomerScope, at: Date, platform?: 'freebsd' | 'linux' | 'windows'): Promise<number> {
  const result = await db
    .updateTable('agents')
    .set({ update_requested: true, update_requested_at: requestedSince(at) })
    .$if(scope !== null, (q) => q.where(inScopeSql('customer_id', scope!)))
    .$if(platform !== undefined, (q) => q.where('platform', '=', platform!))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Keeps the updater's latest report on the agent; `requestAgain` sets the update flag as well. */
export async function saveUpdaterReport(
  db: Db,
  agentId: string,
  report: { state: UpdaterState; version: string | null; message: string | null; reportedAt: Date },
  requestAgain: boolean,
): Promise<void> {
  await db
    .updateTable('agents')
    .set({
      updater_state: report.state,
      updater_version: report.version,
      updater_message: report.message,
      updater_reported_at: report.reportedAt,
      ...(requestAgain ? { update_requested: true, update_requested_at: requestedSince(report.reportedAt) } : {}),
    })
    .where('id', '=', agentId)
    .execute();
}
