// All SQL of configuration backups. Every read and delete names the agent too, so a backup id of
// another agent is simply not found.
import type { Kysely, Selectable } from 'kysely';
import { keysetPage, newestFirst, toPage } from '../../db/keyset.js';
import type { ConfigBackupsTable, Database } from '../../db/schema.js';
import type { Page, PageRequest } from '../../platform/paging.js';

type Db = Kysely<Database>;

const META_COLUMNS = ['id', 'agent_id', 'hash', 'size', 'created_at'] as const;

/** A backup without its content (lists, diff headers). */
export type BackupMeta = Omit<Selectable<ConfigBackupsTable>, 'content'>;
export type BackupRow = Selectable<ConfigBackupsTable>;

/**
 * Stores the backup unless the agent already has one with this hash (then undefined): `on conflict do
 * nothing` keeps two concurrent identical backups from failing. Null when the agent no longer exists.
 */
export async function insertBackupIfNew(
  db: Db,
  values: { agent_id: string; hash: string; size: number; content: string; created_at: Date },
): Promise<BackupMeta | undefined | null> {
  try {
    return await db
      .insertInto('config_backups')
      .values(values)
      .onConflict((oc) => oc.columns(['agent_id', 'hash']).doNothing())
      .returning(META_COLUMNS)
      .executeTakeFirst();
  } catch (err) {
    if (isForeignKeyViolation(err)) return null;
    throw err;
  }
}

export function findBackupByHash(db: Db, agentId: string, hash: string): Promise<BackupMeta | undefined> {
  return db.selectFrom('config_backups').select(META_COLUMNS).where('agent_id', '=', agentId).where('hash', '=', hash).executeTakeFirst();
}

/** Newest first (ties by id), without content. */
const NEWEST_FIRST = newestFirst('created_at', 'id');

export async function listBackups(db: Db, agentId: string, page: PageRequest): Promise<Page<BackupMeta>> {
  const query = db.selectFrom('config_backups').select(META_COLUMNS).where('agent_id', '=', agentId);
  return toPage(await keysetPage(query, NEWEST_FIRST, page).execute(), page.limit);
}

export function findBackup(db: Db, agentId: string, id: number): Promise<BackupRow | undefined> {
  return db.selectFrom('config_backups').selectAll().where('agent_id', '=', agentId).where('id', '=', id).executeTakeFirst();
}

export function findLatestBackup(db: Db, agentId: string): Promise<BackupRow | undefined> {
  return db
    .selectFrom('config_backups')
    .selectAll()
    .where('agent_id', '=', agentId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The agent's backups among `ids`, without content (to check sizes before reading any). */
export function findBackupMetas(db: Db, agentId: string, ids: number[]): Promise<BackupMeta[]> {
  return db.selectFrom('config_backups').select(META_COLUMNS).where('agent_id', '=', agentId).where('id', 'in', ids).execute();
}

export async function findContents(db: Db, agentId: string, ids: number[]): Promise<Map<number, string>> {
  const rows = await db.selectFrom('config_backups').select(['id', 'content']).where('agent_id', '=', agentId).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.content]));
}

export async function deleteBackup(db: Db, agentId: string, id: number): Promise<boolean> {
  const result = await db.deleteFrom('config_backups').where('agent_id', '=', agentId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

function isForeignKeyViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23503';
}
