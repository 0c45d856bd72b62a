// PGlite runs no autovacuum and no checkpointer: it is one PostgreSQL process without background
// workers. This does both jobs, driven by what heartbeats write.
//
// Vacuum. Every heartbeat replaces its agent's ~30 KB system text, and the replaced value stays behind
// in the agents table's TOAST relation as dead rows until a VACUUM. Measured 2026-11-26 (500 agents, in memory): 97 MB after
// 3,100 heartbeats, about 31 KB per heartbeat for ever (300 MB a minute at 10,000 agents), and growing
// files cost CPU too: the in-memory file system copies a file whole each time it outgrows its buffer
// (16 % of the process's CPU under heartbeat load). This vacuums the tables heartbeats rewrite once
// enough has been written since the last time, so their dead rows are reused instead of piling up.
// PostgreSQL's own autovacuum does this there; it is used on PGlite only.
//
// Checkpoints. A PostgreSQL without a postmaster never asks for a checkpoint however much WAL it writes
// (max_wal_size is the checkpointer's trigger), so PGlite kept every WAL segment since it started: about
// 40 KB a heartbeat, 609 MB in pg_wal after 16,000 heartbeats (2026-11-27, scratch on PGlite 0.5.16),
// 24 GB an hour at 10,000 agents, until the disk is full; and a server that crashed would replay all of
// it at its next start. After a vacuum, once CHECKPOINT_EVERY_WAL_BYTES of WAL were written since the
// last checkpoint, this checkpoints; PostgreSQL then recycles or removes the older segments (how many it
// keeps for reuse depends on min/max_wal_size, set in create-db.ts). Measured in the same scratch with
// checkpoints every 64 MB: pg_wal 97 MB, each checkpoint 96–135 ms (it holds the one connection).
//
// Most vacuums take the TOAST relation only (PROCESS_MAIN false): that is where the replaced texts are,
// while the table itself mostly cleans up after heartbeats by itself (their updates are HOT, pruned on
// the page) and vacuuming it scans every one of its eight indexes. Every WHOLE_TABLE_EVERY-th vacuum
// takes the table too. Measured 2026-11-26 (10,000 agents on disk, 550 heartbeats of 25 KB between two
// vacuums): 38–47 ms against 69–107 ms for the whole table (at 3,000 agents 16 against 11 ms: the gain is
// for large fleets), and a vacuum holds the one connection.
import { sql, type Kysely } from 'kysely';
import type { Logger } from '../platform/logger.js';
import type { Database } from './schema.js';

export interface PgliteUpkeepOptions {
  /** Tables to vacuum (their TOAST relations are included). */
  tables: readonly string[];
  /** WAL since the last checkpoint that calls for the next one (CHECKPOINT_EVERY_WAL_BYTES). */
  checkpointEveryWalBytes?: number;
  /**
   * Bytes written to them between two vacuums. Smaller means shorter pauses (a vacuum holds the one
   * connection) but more of them; 16 MB is about 550 heartbeats of 30 KB, a vacuum of some tens of ms.
   */
  everyBytes?: number;
}

/** One vacuum in this many takes the tables themselves, not only their TOAST relations. */
const WHOLE_TABLE_EVERY = 4;
/** WAL written since the last checkpoint that makes the next vacuum checkpoint too. */
export const CHECKPOINT_EVERY_WAL_BYTES = 128 * 1024 * 1024;

export class PgliteUpkeep {
  #written = 0;
  #vacuums = 0;
  #running: Promise<void> | null = null;
  readonly #everyBytes: number;
  readonly #checkpointEveryWalBytes: number;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly logger: Logger,
    private readonly options: PgliteUpkeepOptions,
  ) {
    this.#everyBytes = options.everyBytes ?? 16 * 1024 * 1024;
    this.#checkpointEveryWalBytes = options.checkpointEveryWalBytes ?? CHECKPOINT_EVERY_WAL_BYTES;
  }

  /** Counts what was written; when due, starts a vacuum and then a checkpoint if one is due too (not awaited: they queue behind the statements in flight). */
  noteWritten(bytes: number): void {
    this.#written += bytes;
    if (this.#running || this.#written < this.#everyBytes) return;
    this.#written = 0;
    this.#running = this.#vacuumAndCheckpoint().finally(() => {
      this.#running = null;
    });
  }

  /** Resolves when no vacuum or checkpoint is running (tests, shutdown). */
  async settled(): Promise<void> {
    await this.#running;
  }

  async #vacuumAndCheckpoint(): Promise<void> {
    await this.#vacuum();
    try {
      const { rows } = await sql<{ behind: number }>`select (pg_current_wal_lsn() - redo_lsn)::int8 as behind from pg_control_checkpoint()`.execute(this.db);
      if (Number(rows[0]?.behind ?? 0) >= this.#checkpointEveryWalBytes) await sql`checkpoint`.execute(this.db);
    } catch (err) {
      // The next vacuum tries again; meanwhile the WAL only grows.
      this.logger.warn({ err }, 'PGlite checkpoint failed');
    }
  }

  async #vacuum(): Promise<void> {
    const wholeTables = this.#vacuums++ % WHOLE_TABLE_EVERY === WHOLE_TABLE_EVERY - 1;
    for (const table of this.options.tables) {
      try {
        await (wholeTables ? sql`vacuum ${sql.table(table)}` : sql`vacuum (process_main false) ${sql.table(table)}`).execute(this.db);
      } catch (err) {
        // Nothing is lost by a failed vacuum; the next one catches up.
        this.logger.warn({ err, table }, 'PGlite vacuum failed');
      }
    }
  }
}
