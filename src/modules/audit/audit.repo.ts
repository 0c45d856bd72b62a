// All SQL of the audit log.
import type { Insertable, Kysely } from 'kysely';
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

export async function insertAuditEntries(db: Kysely<Database>, entries: ReadonlyArray<Insertable<AuditLogTable>>): Promise<void> {
  if (entries.length > 0) await db.insertInto('audit_log').values([...entries]).execute();
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
