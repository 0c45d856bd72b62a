// The audit log (contract §10): who did what, when, from where. It records the request line and the
// outcome, never bodies or query strings, so no secret can end up in it.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { requireUnscoped, type Caller } from '../auth/caller.js';
import * as repo from './audit.repo.js';

export type AuditRecord = repo.AuditRecord;

export class AuditService {
  readonly #inFlight = new Set<Promise<void>>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async record(entry: AuditRecord): Promise<void> {
    // The path without its query string: credentials may travel there.
    const path = entry.path.split('?')[0] ?? '';
    await repo.insertAuditEntry(this.db, { ...entry, path, time: this.clock.now() });
  }

  /**
   * Starts writing the entry and returns at once, so a response need not wait for the database's
   * durable commit (about 1 ms per fsync here, most of a remote command's round trip). Reads of the log
   * and shutdown wait for entries still in flight (flush), so a client never reads the log without its
   * own entry, and a stopping server loses none. A failed write is reported to `onError`.
   */
  recordSoon(entry: AuditRecord, onError: (err: unknown) => void): void {
    const writing = this.record(entry)
      .catch(onError)
      .finally(() => this.#inFlight.delete(writing));
    this.#inFlight.add(writing);
  }

  /** Waits until every entry started so far is written (or has failed). */
  async flush(): Promise<void> {
    await Promise.all(this.#inFlight);
  }

  /** The audit log spans every customer, so customer-scoped keys cannot read it. */
  async list(caller: Caller, filter: repo.AuditFilter) {
    requireUnscoped(caller);
    await this.flush();
    return repo.listAuditEntries(this.db, filter);
  }
}
