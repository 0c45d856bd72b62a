// All SQL of the command history: a row is written when an exec starts and completed when it ends.
import type { Kysely, Selectable } from 'kysely';
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

type StartedRow = Pick<CommandHistoryTable, 'agent_id' | 'source' | 'actor_type' | 'actor' | 'script_id' | 'script_name' | 'command' | 'timeout_s'> & {
  started_at: Date;
};

// Every exec writes these two (compiled-once.ts: built once, prepared on PostgreSQL).
const insertStartedStatement = compiledOnce<Database, StartedRow, { id: number }>((db, slot) =>
  db
    .insertInto('command_history')
    .values({
      agent_id: slot('agent_id'),
      source: slot('source'),
      actor_type: slot('actor_type'),
      actor: slot('actor'),
      script_id: slot('script_id'),
      script_name: slot('script_name'),
      command: slot('command'),
      timeout_s: slot('timeout_s'),
      started_at: slot('started_at'),
    })
    .returning('id'),
);

type Outcome = { finished_at: Date; exit_code: number | null; error: string | null; output: Buffer | null; output_bytes: number; output_truncated: boolean; output_preview: string };

const finishStatement = compiledOnce<Database, Outcome & { id: number }>((db, slot) =>
  db
    .updateTable('command_history')
    .set({
      finished_at: slot('finished_at'),
      exit_code: slot('exit_code'),
      error: slot('error'),
      output: slot('output'),
      output_bytes: slot('output_bytes'),
      output_truncated: slot('output_truncated'),
      output_preview: slot('output_preview'),
    })
    .where('id', '=', slot('id')),
);

export async function insertStarted(db: Db, row: StartedRow): Promise<number> {
  const { rows } = await insertStartedStatement(db, row);
  return Number(rows[0]!.id);
}

export async function finish(db: Db, id: number, outcome: Outcome): Promise<void> {
  await finishStatement(db, { ...outcome, id });
}
