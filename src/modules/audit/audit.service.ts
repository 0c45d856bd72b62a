// The audit log (contract §10): who did what, when, from where. It records the request line and the
// outcome, never bodies or query strings, so no secret can end up in it.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { PageRequest } from '../../platform/paging.js';
import { requireUnscoped, type Caller } from '../auth/caller.js';
import * as repo from './audit.repo.js';

export type AuditRecord = repo.AuditRecord;

export class AuditService {
  /** Entries waiting for the next write, and the write in progress (see recordSoon). */
  #queue: Array<{ entry: repo.AuditEntry; done: (err?: unknown) => void }> = [];
  #writing: Promise<void> | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  /** Writes the entry and resolves once it is stored. */
  record(entry: AuditRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ entry: this.#stamped(entry), done: (err) => (err === undefined ? resolve() : reject(err)) });
      // Started on the next turn of the event loop, so the response that queued it goes out first.
      this.#writing ??= new Promise<void>((started) => setImmediate(started)).then(() => this.#drain());
    });
  }

  /**
   * Starts writing the entry and returns at once, so a response need not wait for the database's
   * durable commit (about 1 ms per fsync here, most of a remote command's round trip). Entries that
   * arrive while a write is in progress go together in the next one (group commit). Reads of the log
   * and shutdown wait for entries still queued (flush), so a client never reads the log without its own
   * entry, and a stopping server loses none. A failed write is reported to `onError`.
   */
  recordSoon(entry: AuditRecord, onError: (err: unknown) => void): void {
    this.record(entry).catch(onError);
  }

  /** Waits until every entry started so far is written (or has failed). */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, 500);
      try {
        await repo.insertAuditEntries(this.db, batch.map((b) => b.entry));
        for (const b of batch) b.done();
      } catch (err) {
        for (const b of batch) b.done(err);
      }
    }
    this.#writing = null;
  }

  #stamped(entry: AuditRecord): repo.AuditEntry {
    // The path without its query string: credentials may travel there.
    const path = entry.path.split('?')[0] ?? '';
    return { ...entry, path, time: this.clock.now() };
  }

  /** The audit log spans every customer, so customer-scoped keys cannot read it. */
  async list(caller: Caller, filter: repo.AuditFilter, page: PageRequest) {
    requireUnscoped(caller);
    await this.flush();
    return repo.listAuditEntries(this.db, filter, page);
  }
}
