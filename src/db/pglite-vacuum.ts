// PGlite runs no autovacuum: it is one PostgreSQL process without background workers. Every heartbeat
// replaces its agent's ~30 KB system text, and the replaced value stays behind in the agents table's
// TOAST relation as dead rows until a VACUUM. Measured 2026-11-26 (500 agents, in memory): 97 MB after
// 3,100 heartbeats, about 31 KB per heartbeat for ever (300 MB a minute at 10,000 agents), and growing
// files cost CPU too: the in-memory file system copies a file whole each time it outgrows its buffer
// (16 % of the process's CPU under heartbeat load). This vacuums the tables heartbeats rewrite once
// enough has been written since the last time, so their dead rows are reused instead of piling up.
// PostgreSQL's own autovacuum does this there; it is used on PGlite only.
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

export interface PgliteVacuumOptions {
  /** Tables to vacuum (their TOAST relations are included). */
  tables: readonly string[];
  /**
   * Bytes written to them between two vacuums. Smaller means shorter pauses (a vacuum holds the one
   * connection) but more of them; 16 MB is about 550 heartbeats of 30 KB, a vacuum of some tens of ms.
   */
  everyBytes?: number;
}

/** One vacuum in this many takes the tables themselves, not only their TOAST relations. */
const WHOLE_TABLE_EVERY = 4;

export class PgliteVacuum {
  #written = 0;
  #vacuums = 0;
  #running: Promise<void> | null = null;
  readonly #everyBytes: number;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly logger: Logger,
    private readonly options: PgliteVacuumOptions,
  ) {
    this.#everyBytes = options.everyBytes ?? 16 * 1024 * 1024;
  }

  /** Counts what was written; starts a vacuum (not awaited: it queues behind the statements in flight) when due. */
  noteWritten(bytes: number): void {
    this.#written += bytes;
    if (this.#running || this.#written < this.#everyBytes) return;
    this.#written = 0;
    this.#running = this.#vacuum().finally(() => {
      this.#running = null;
    });
  }

  /** Resolves when no vacuum is running (tests, shutdown). */
  async settled(): Promise<void> {
    await this.#running;
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
