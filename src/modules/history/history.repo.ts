// All SQL of the command history: ids reserved ahead, a row written as a run starts (or once, whole,
// when it ended first), completed when it ends (history-writer.ts decides which).
import { sql, type Kysely, type Selectable } from 'kysely';
import { compiledOnce } from '../../db/compiled-once.js';
import { keyColumn, keyset, keysetPage, toPage } from '../../db/keyset.js';
import type { CommandHistoryTable, Database } from '../../db/schema.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { inScopeSql, type CustomerScope } from '../auth/caller.js';

type Db = Kysely<Database>;

export type HistoryRow = Omit<Selectable<CommandHistoryTable>, 'output'> & { agent_name: string };
export type HistoryRowWithOutput = HistoryRow & { output: Buffer | null };

const LIST_COLUMNS = [
  'h.id',
  'h.agent_id',
  'a.name as agent_name',
  'h.source',
  'h.actor_type',
  'h.actor',
  'h.script_id',
  'h.script_name',
  'h.command',
  'h.timeout_s',
  'h.started_at',
  'h.finished_at',
  'h.exit_code',
  'h.error',
  'h.output_bytes',
  'h.output_truncated',
  'h.output_preview',
] as const;

export interface HistoryFilter {
  scope: CustomerScope;
  agentId?: string | undefined;
  source?: CommandHistoryTable['source'] | undefined;
  /** Substring of the command, script name, who ran it, agent name or the start of the output. */
  q?: string | undefined;
}

// Ids grow with time: newest first is id descending (an int8 key).
const NEWEST_FIRST = keyset([keyColumn('h.id', 'int8')], true);

export async function listHistory(db: Db, f: HistoryFilter, page: PageRequest): Promise<Page<HistoryRow>> {
  let query = db.selectFrom('command_history as h').innerJoin('agents as a', 'a.id', 'h.agent_id').select(LIST_COLUMNS);
  if (f.scope !== null) query = query.where(inScopeSql('a.customer_id', f.scope));
  if (f.agentId !== undefined) query = query.where('h.agent_id', '=', f.agentId);
  if (f.source !== undefined) query = query.where('h.source', '=', f.source);
  if (f.q) {
    const pattern = `%${f.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((eb) =>
      eb.or([
        eb('h.command', 'ilike', pattern),
        eb('h.script_name', 'ilike', pattern),
        eb('h.actor', 'ilike', pattern),
        eb('a.name', 'ilike', pattern),
        eb('h.output_preview', 'ilike', pattern),
      ]),
    );
  }
  return toPage(await keysetPage(query, NEWEST_FIRST, page).execute(), page.limit);
}

export function findHistory(db: Db, id: number): Promise<(HistoryRowWithOutput & { customer_id: number | null }) | undefined> {
  return db
    .selectFrom('command_history as h')
    .innerJoin('agents as a', 'a.id', 'h.agent_id')
    .select([...LIST_COLUMNS, 'h.output', 'a.customer_id'])
    .where('h.id', '=', id)
    .executeTakeFirst();
}

export type StartedRow = Pick<CommandHistoryTable, 'agent_id' | 'source' | 'actor_type' | 'actor' | 'script_id' | 'script_name' | 'command' | 'timeout_s'> & {
  started_at: Date;
};

export type Outcome = { finished_at: Date; exit_code: number | null; error: string | null; output: Buffer | null; output_bytes: number; output_truncated: boolean; output_preview: string };

export type HistoryWrite = StartedRow & Partial<Outcome> & { id: number };

const WRITTEN = ['id', 'agent_id', 'source', 'actor_type', 'actor', 'script_id', 'script_name', 'command', 'timeout_s', 'started_at', 'finished_at', 'exit_code', 'error', 'output', 'output_bytes', 'output_truncated', 'output_preview'] as const;
const OUTCOME = ['finished_at', 'exit_code', 'error', 'output', 'output_bytes', 'output_truncated', 'output_preview'] as const;

// Every exec writes these (compiled-once.ts: built once, prepared on PostgreSQL), a batch of rows at a
// time: one JSON parameter read back in the table's own row type, one text for any batch.
const reserveIdsStatement = compiledOnce<Database, { count: number }, { id: string }>((db, slot) =>
  db
    .selectFrom(sql`generate_series(1, ${slot('count')}::int)`.as('g'))
    .select(sql<string>`nextval(pg_get_serial_sequence('command_history', 'id'))::text`.as('id')),
);

const rowsOf = (json: string) => sql<Selectable<CommandHistoryTable>>`json_populate_recordset(null::command_history, ${json}::json)`.as('e');

const insertStatement = compiledOnce<Database, { rows: string }>((db, slot) =>
  db
    .insertInto('command_history')
    .columns([...WRITTEN])
    .expression((eb) => eb.selectFrom(rowsOf(slot('rows'))).select([...WRITTEN])),
);

const finishStatement = compiledOnce<Database, { rows: string }>((db, slot) =>
  db
    .updateTable('command_history as h')
    .from(rowsOf(slot('rows')))
    .set((eb) => Object.fromEntries(OUTCOME.map((c) => [c, eb.ref(`e.${c}`)])))
    .whereRef('h.id', '=', 'e.id'),
);

/** `count` new entry ids from the table's identity sequence, in ascending order. */
export async function reserveIds(db: Db, count: number): Promise<number[]> {
  const { rows } = await reserveIdsStatement(db, { count });
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
}

/**
 * Rows as JSON for the statements above: bytea in its hex form; text well-formed and without NUL, which
 * PostgreSQL's JSON input refuses (one such string would fail every row of its batch).
 */
function asJson(rows: ReadonlyArray<Record<string, unknown>>): string {
  const hex = rows.map((row) => (row.output instanceof Buffer ? { ...row, output: `\\x${row.output.toString('hex')}` } : row));
  return JSON.stringify(hex, (_key, value: unknown) => (typeof value === 'string' ? value.toWellFormed().replaceAll('\0', '\ufffd') : value));
}

/** New rows: runs in progress (no outcome yet: listed as running) and runs that ended before theirs was written. */
export async function insertRows(db: Db, rows: readonly HistoryWrite[]): Promise<void> {
  const complete = rows.map((r) => ({ output_bytes: 0, output_truncated: false, output_preview: '', ...r }));
  await insertStatement(db, { rows: asJson(complete) });
}

/** The outcomes of runs whose rows were written while they ran. */
export async function finishRows(db: Db, rows: ReadonlyArray<Outcome & { id: number }>): Promise<void> {
  await finishStatement(db, { rows: asJson(rows) });
}
