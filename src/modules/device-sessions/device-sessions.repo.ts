// All SQL of device sessions (migration 0030): one row per device shell or file transfer.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database, DeviceSessionKind } from '../../db/schema.js';
import type { DeviceSessionsTable } from '../../db/schema-device.js';
import { keyColumn, keyset, keysetPage, toPage } from '../../db/keyset.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { inScopeSql, type CustomerScope } from '../auth/caller.js';

type Db = Kysely<Database>;
export type DeviceSessionRow = Selectable<DeviceSessionsTable>;

/** A session as it starts: the table's row without what its end fills in. */
export type NewDeviceSession = Omit<Insertable<DeviceSessionsTable>, 'ended_at' | 'end_reason' | 'bytes_in' | 'bytes_out' | 'recording_sha256' | 'recording_bytes'>;

export async function insertSession(db: Db, row: NewDeviceSession): Promise<void> {
  await db.insertInto('device_sessions').values(row).execute();
}

export interface SessionEnd {
  ended_at: Date;
  end_reason: string;
  bytes_in: number;
  bytes_out: number;
  recording_sha256?: string | null;
  recording_bytes?: number | null;
}

export async function endSession(db: Db, id: string, end: SessionEnd): Promise<void> {
  await db.updateTable('device_sessions').set(end).where('id', '=', id).where('ended_at', 'is', null).execute();
}

export interface SessionFilter {
  agentId?: string | undefined;
  userId?: number | undefined;
  kind?: DeviceSessionKind | undefined;
  scope: CustomerScope;
}

/** Newest first: by start, sessions of one instant by id. */
const NEWEST_FIRST = keyset([keyColumn('started_at', 'timestamptz'), keyColumn('id', 'text')], true);

/** One page of sessions, newest first, within the filter and the caller's scope. */
export async function listSessions(db: Db, filter: SessionFilter, page: PageRequest): Promise<Page<DeviceSessionRow>> {
  let query = db.selectFrom('device_sessions').selectAll();
  if (filter.agentId !== undefined) query = query.where('agent_id', '=', filter.agentId);
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
  if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
  if (filter.scope !== null) query = query.where(inScopeSql('customer_id', filter.scope));
  return toPage(await keysetPage(query, NEWEST_FIRST, page).execute(), page.limit);
}

export async function findSession(db: Db, id: string): Promise<DeviceSessionRow | undefined> {
  return db.selectFrom('device_sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Recordings of sessions started before `cutoff`: their blobs are deleted, and the rows forget them. */
export async function expiredRecordings(db: Db, cutoff: Date, limit: number): Promise<Array<{ id: string; recording_sha256: string }>> {
  const rows = await db
    .selectFrom('device_sessions')
    .select(['id', 'recording_sha256'])
    .where('started_at', '<', cutoff)
    .where('recording_sha256', 'is not', null)
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.id, recording_sha256: r.recording_sha256! }));
}

export async function forgetRecording(db: Db, id: string): Promise<void> {
  await db.updateTable('device_sessions').set({ recording_sha256: null, recording_bytes: null }).where('id', '=', id).execute();
}

/** Whether any session still keeps this recording (blobs are named by content). */
export async function isRecordingKept(db: Db, sha256: string): Promise<boolean> {
  return (await db.selectFrom('device_sessions').select('id').where('recording_sha256', '=', sha256).limit(1).executeTakeFirst()) !== undefined;
}
