// The audit log (contract §10): who did what, when, from where. It records the request line and the
// outcome, never bodies or query strings, so no secret can end up in it.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { PageRequest } from '../../platform/paging.js';
import { GroupCommit } from '../../platform/group-commit.js';
import { isDatabaseUnavailable } from '../../db/db-errors.js';
import { scopeOf, type Caller } from '../auth/caller.js';
import * as repo from './audit.repo.js';
import { namedOf, nameTargets, type NamedTarget } from './audit-target-names.js';
import { bounded, type AuditTarget, type TargetRef } from './audit-targets.js';

/** What a caller records; `target` is the object changed, named now or looked up when written. */
export type AuditRecord = Omit<repo.AuditRecord, 'target'> & { target?: AuditTarget | null };
type Queued = Omit<repo.AuditEntry, 'target'> & { target: AuditTarget | null };

/**
 * How long an entry waits for others to be written with it (group-commit.ts). Each statement is a
 * socket write and a commit on PostgreSQL, and runs on the server's own thread on the embedded
 * database (B2, one command at a time on PGlite: 1.9 ms of CPU per command gathering for 10 ms, 1.0–1.3
 * for 25–30).
 */
const GATHER_MS = 25;
/** How long a batch is written again while the database is away (a restart): the changes it records were made. */
const RETRY_FOR_MS = 20_000;

export class AuditService {
  readonly #queue: GroupCommit<Queued, void>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {
    this.#queue = new GroupCommit(
      async (batch) => {
        await repo.insertAuditEntries(this.db, await this.#named(batch));
        return [];
      },
      { gatherMs: GATHER_MS, maxBatch: 500, retry: { when: isDatabaseUnavailable, forMs: RETRY_FOR_MS } },
    );
  }

  /** Writes the entry and resolves once it is stored. */
  record(entry: AuditRecord): Promise<void> {
    return this.#queue.submit(this.#stamped(entry));
  }

  /**
   * Queues the entry and returns at once, so a response need not wait for the database's durable
   * commit (about 1 ms per fsync here, most of a remote command's round trip). Entries are written
   * together, a batch every few milliseconds (group-commit.ts). Reads of the log and shutdown wait for
   * entries still queued (flush), so a client never reads the log without its own entry, and a stopping
   * server loses none. A failed write is reported to `onError`.
   */
  recordSoon(entry: AuditRecord, onError: (err: unknown) => void): void {
    this.record(entry).catch(onError);
  }

  /** Waits until every entry made so far is written (or has failed). */
  flush(): Promise<void> {
    return this.#queue.flush();
  }

  #stamped(entry: AuditRecord): Queued {
    // The path without its query string: credentials may travel there.
    const path = entry.path.split('?')[0] ?? '';
    return { ...entry, path, target: entry.target ?? null, time: this.clock.now() };
  }

  /** The batch's objects named, one lookup per kind; a failed lookup leaves the kind and id. */
  async #named(entries: Queued[]): Promise<repo.AuditEntry[]> {
    const refs = entries.flatMap((e) => (e.target && 'kind' in e.target ? [e.target] : []));
    const none = () => new Map<string, NamedTarget>();
    const names = refs.length === 0 ? none() : await nameTargets(this.db, refs).catch(none);
    return entries.map((e) => {
      if (e.target === null) return { ...e, target: null, customer_id: null };
      const named = 'kind' in e.target ? namedOf(names, e.target) : { label: bounded(e.target.label), customerId: e.target.customerId ?? null };
      return { ...e, target: named.label, customer_id: named.customerId };
    });
  }

  /** Names the object now, for a change that removes it (by the time the entry is written it is gone). */
  async nameNow(ref: TargetRef): Promise<AuditTarget> {
    const names = await nameTargets(this.db, [ref]).catch(() => new Map<string, NamedTarget>());
    return namedOf(names, ref);
  }

  /** The whole log for unscoped callers; for callers limited to customers, the entries about theirs. */
  async list(caller: Caller, filter: repo.AuditFilter, page: PageRequest) {
    await this.flush();
    return repo.listAuditEntries(this.db, { ...filter, scope: scopeOf(caller) }, page);
  }
}
