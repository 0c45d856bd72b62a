// The audit log (contract §10): who did what, when, from where. It records the request line and the
// outcome, never bodies or query strings, so no secret can end up in it.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { requireUnscoped, type Caller } from '../auth/caller.js';
import * as repo from './audit.repo.js';

export type AuditRecord = repo.AuditRecord;

export class AuditService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async record(entry: AuditRecord): Promise<void> {
    // The path without its query string: credentials may travel there.
    const path = entry.path.split('?')[0] ?? '';
    await repo.insertAuditEntry(this.db, { ...entry, path, time: this.clock.now() });
  }

  /** The audit log spans every customer, so customer-scoped keys cannot read it. */
  list(caller: Caller, filter: repo.AuditFilter) {
    requireUnscoped(caller);
    return repo.listAuditEntries(this.db, filter);
  }
}
