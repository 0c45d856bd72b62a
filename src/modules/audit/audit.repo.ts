// All SQL of the audit log.
import { sql, type Insertable, type Kysely } from 'kysely';
import { compiledOnce } from '../../db/compiled-once.js';
import { keysetPage, newestFirst, toPage } from '../../db/keyset.js';
import type { AuditLogTable, Database } from '../../db/schema.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { inScopeSql, type CustomerScope } from '../auth/caller.js';

/** What a caller records: everything but the id and the time, which the log assigns. */
export type AuditRecord = Omit<Insertable<AuditLogTable>, 'id' | 'time'>;
export type AuditEntry = Insertable<AuditLogTable>;
export type AuditEntryRow = { id: number; time: Date } & AuditRecord;

export interface AuditFilter {
  actor?: string | undefined;
  action?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  /** Only entries about these customers; null: all. */
  scope?: CustomerScope | undefined;
}

const NEWEST_FIRST = newestFirst('time', 'id');

const COLUMNS = ['time', 'actor_type', 'actor', 'action', 'method', 'path', 'status_code', 'ip', 'target', 'customer_id'] as const;

// Every write request adds an entry: one statement text for any number of them (compiled-once.ts), the
// entries as one JSON parameter read back in the table's own row type (a column left out reads as null).
// Strings go in well-formed: PostgreSQL's JSON input refuses an escaped lone surrogate, which would fail
// the whole batch, where a text parameter's UTF-8 encoding made it U+FFFD.
const insertStatement = compiledOnce<Database, { entries: string }>((db, slot) =>
  db
    .insertInto('audit_log')
    .columns([...COLUMNS])
    .expression((eb) => eb.selectFrom(sql<AuditLogTable>`json_populate_recordset(null::audit_log, ${slot('entries')}::json)`.as('e')).select([...COLUMNS])),
);

export async function insertAuditEntries(db: Kysely<Database>, entries: ReadonlyArray<Insertable<AuditLogTable>>): Promise<void> {
  if (entries.length === 0) return;
  const rows = entries.map((e) => Object.fromEntries(COLUMNS.map((c) => [c, typeof e[c] === 'string' ? e[c].toWellFormed() : e[c]])));
  await insertStatement(db, { entries: JSON.stringify(rows) });
}

export async function listAuditEntries(db: Kysely<Database>, filter: AuditFilter, page: PageRequest): Promise<Page<AuditEntryRow>> {
  const query = db
    .selectFrom('audit_log')
    .selectAll()
    .$if(filter.actor !== undefined, (q) => q.where('actor', '=', filter.actor!))
    .$if(filter.action !== undefined, (q) => q.where('action', '=', filter.action!))
    .$if(filter.from !== undefined, (q) => q.where('time', '>=', filter.from!))
    .$if(filter.to !== undefined, (q) => q.where('time', '<=', filter.to!))
    .$if(filter.scope != null, (q) => q.where(inScopeSql('customer_id', filter.scope!)));
  return toPage(await keysetPage(query, NEWEST_FIRST, page).execute(), page.limit);
}
