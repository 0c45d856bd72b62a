// All SQL of the audit log.
import type { Insertable, Kysely } from 'kysely';
import type { AuditLogTable, Database } from '../../db/schema.js';

/** What a caller records: everything but the id and the time, which the log assigns. */
export type AuditRecord = Omit<Insertable<AuditLogTable>, 'id' | 'time'>;
export type AuditEntry = Insertable<AuditLogTable>;
export type AuditEntryRow = { id: number; time: Date } & AuditRecord;

export interface AuditFilter {
  limit: number;
  actor?: string | undefined;
  action?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

export async function insertAuditEntries(db: Kysely<Database>, entries: ReadonlyArray<Insertable<AuditLogTable>>): Promise<void> {
  if (entries.length > 0) await db.insertInto('audit_log').values([...entries]).execute();
}

export function listAuditEntries(db: Kysely<Database>, filter: AuditFilter) {
  return db
    .selectFrom('audit_log')
    .selectAll()
    .$if(filter.actor !== undefined, (q) => q.where('actor', '=', filter.actor!))
    .$if(filter.action !== undefined, (q) => q.where('action', '=', filter.action!))
    .$if(filter.from !== undefined, (q) => q.where('time', '>=', filter.from!))
    .$if(filter.to !== undefined, (q) => q.where('time', '<=', filter.to!))
    .orderBy('time', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit)
    .execute();
}
