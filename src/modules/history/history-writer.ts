// Writes the command history behind the commands instead of in front of their answers (issue 36, B2).
// Every exec used to wait for two statements (the started row's insert, for its id, and the completion)
// and so answered a database round trip or two after the agent did; on two shared cores each statement
// also costs a socket write and a commit, a large part of a command's CPU. Now:
// - ids come from the identity sequence a block at a time, fetched while the command travels: the
//   block grows while commands use it up within a second and shrinks when ids go stale, so a quiet server
//   reserves one id per command (no gaps) and a busy one one statement per 64 commands. A block older
//   than a second is dropped, so entries of several instances (cluster mode) stay in time order, "newest
//   first", but for commands within the same second.
// - the started row is written LIST_AFTER_MS after the command left, or at once when someone reads the
//   history (flush): a command answered before then is written once, whole. Reads never miss a run.
// - the answer goes out first; rows follow in batches (group-commit.ts: a batch gathers for 25 ms),
//   completions after their started rows. Reads and shutdown wait for what is queued. A failed write is
//   logged as a lost entry, as before; a crash loses the last few milliseconds' rows.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import { isDatabaseUnavailable } from '../../db/db-errors.js';
import { GroupCommit } from '../../platform/group-commit.js';
import * as repo from './history.repo.js';
import { logFailure } from '../../db/db-errors.js';

/** How long a run waits before its started row is written, unless it ends or the history is read first. */
export const LIST_AFTER_MS = 100;
/** How long a row waits for others to be written with it (group-commit.ts). */
const GATHER_MS = 25;
const ID_BLOCK_MAX = 64;
const ID_BLOCK_MAX_AGE_MS = 1000;

/** A batch write whose items need no outcome of their own, as GroupCommit's writer. */
const withoutOutcomes =
  <T>(write: (rows: T[]) => Promise<void>) =>
  async (rows: T[]): Promise<void[]> => {
    await write(rows);
    return [];
  };

/**
 * A run's outcome, computed when its row is written: packing the output (gzip) is work the answer
 * need not wait for.
 */
export type OutcomeOf = () => repo.Outcome;

interface OpenRun {
  row: repo.StartedRow;
  cancelTimer: () => void;
  /** The started row's write once queued: true when it is stored. */
  started: Promise<boolean> | null;
}

export class HistoryWriter {
  #ids: number[] = [];
  #idsReservedAt = 0;
  #blockSize = 1;
  #reserving: Promise<void> | null = null;
  readonly #open = new Map<number, OpenRun>();
  readonly #inserts: GroupCommit<{ id: number; row: repo.StartedRow; outcome?: OutcomeOf }, void>;
  readonly #finishes: GroupCommit<{ id: number; outcome: OutcomeOf }, void>;
  /** Completions waiting for their started rows' writes. */
  readonly #waiting = new Set<Promise<unknown>>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    // While the database is away (a restart) a batch is written again for a while: its commands ran, and
    // their answers may already name the entries (history_id).
    const options = { gatherMs: GATHER_MS, maxBatch: 200, retry: { when: isDatabaseUnavailable, forMs: 20_000 } };
    this.#inserts = new GroupCommit(
      withoutOutcomes((runs) => repo.insertRows(db, runs.map(({ id, row, outcome }) => ({ ...row, ...outcome?.(), id })))),
      options,
    );
    this.#finishes = new GroupCommit(withoutOutcomes((runs) => repo.finishRows(db, runs.map(({ id, outcome }) => ({ ...outcome(), id })))), options);
  }

  /** A new entry's id; rejects when the database cannot give one. */
  async reserveId(): Promise<number> {
    for (;;) {
      if (this.clock.now().getTime() - this.#idsReservedAt > ID_BLOCK_MAX_AGE_MS) this.#dropStaleIds();
      const id = this.#ids.shift();
      if (id !== undefined) return id;
      this.#reserving ??= this.#reserveBlock().finally(() => (this.#reserving = null));
      await this.#reserving;
    }
  }

  /** The run `id` has started: listed once LIST_AFTER_MS pass or the history is read. */
  started(id: number, row: repo.StartedRow): void {
    const run: OpenRun = { row, cancelTimer: () => undefined, started: null };
    // Real time, not the application's clock, as GroupCommit's gathering: how long a write waits to be
    // saved, not a business delay (a test's stopped clock must not hold it, nor count it as a sleeper).
    const timer = setTimeout(() => this.#writeStarted(id, run), LIST_AFTER_MS);
    run.cancelTimer = () => clearTimeout(timer);
    this.#open.set(id, run);
  }

  /** The run `id` has ended: its row written whole, or completed after its started row. */
  finished(id: number, outcome: OutcomeOf): void {
    const run = this.#open.get(id);
    if (!run) return;
    this.#open.delete(id);
    run.cancelTimer();
    if (run.started === null) {
      this.#inserts.submit({ id, row: run.row, outcome }).catch((err: unknown) => this.#lost(err, id, run.row));
      return;
    }
    const completion = run.started
      .then((stored) => (stored ? this.#finishes.submit({ id, outcome }) : undefined))
      .catch((err: unknown) => logFailure(this.logger, err, { historyId: id }, 'could not complete a command history entry'));
    this.#waiting.add(completion);
    void completion.finally(() => this.#waiting.delete(completion));
  }

  /** Writes every run not yet listed and waits for all writes begun so far: reads and shutdown call it. */
  async flush(): Promise<void> {
    for (const [id, run] of this.#open) this.#writeStarted(id, run);
    await this.#inserts.flush();
    while (this.#waiting.size > 0) await Promise.all(this.#waiting);
    await this.#finishes.flush();
  }

  #writeStarted(id: number, run: OpenRun): void {
    if (run.started !== null) return;
    run.cancelTimer();
    run.started = this.#inserts.submit({ id, row: run.row }).then(
      () => true,
      (err: unknown) => {
        this.#lost(err, id, run.row);
        return false;
      },
    );
  }

  #lost(err: unknown, id: number, row: repo.StartedRow): void {
    logFailure(this.logger, err, { historyId: id, agentId: row.agent_id }, 'could not record an exec in the command history');
  }

  #dropStaleIds(): void {
    // Ids left over mean the block was too big for this pace of commands.
    if (this.#ids.length > 0) this.#blockSize = Math.max(1, this.#blockSize >> 1);
    this.#ids = [];
  }

  async #reserveBlock(): Promise<void> {
    // The last block used up within its second: commands come faster than one block a second.
    if (this.clock.now().getTime() - this.#idsReservedAt <= ID_BLOCK_MAX_AGE_MS) this.#blockSize = Math.min(ID_BLOCK_MAX, this.#blockSize * 2);
    const ids = await repo.reserveIds(this.db, this.#blockSize);
    this.#ids.push(...ids);
    this.#idsReservedAt = this.clock.now().getTime();
  }
}
