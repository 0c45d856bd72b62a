// Database handles: the embedded PGlite (default, data under DATA_DIR) or a PostgreSQL pool. Both give a
// Kysely<Database> and return the same JavaScript types, so features never care which one runs.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { CompiledQuery, Kysely, PostgresDialect, type LogEvent } from 'kysely';
import pg from 'pg';
import { LogThrottle } from '../platform/log-throttle.js';
import type { Logger } from '../platform/logger.js';
import { acquireDataDirLock } from './data-dir-lock.js';
import { failureSummary } from './db-errors.js';
import { sendLongTextAsBytes } from './pglite-text-params.js';
import { FairPGliteDialect } from './pglite-fair-dialect.js';
import { preparedNameOf, preparingRegisteredTexts } from './prepared-statements.js';
import { withTimeSlices } from './pglite-time-slices.js';
import { pgliteArtifacts } from './pglite-artifacts.js';
import { fillFromSeed, type SeedMigrations } from './pglite-seed.js';
import type { Database } from './schema.js';

export type DbDialect = 'postgres' | 'pglite';

/** Runs one statement of constant text (registered with preparedText for PostgreSQL) and returns its rows. */
export type StatementRunner = <Row>(text: string, values: readonly unknown[]) => Promise<Row[]>;

/** A database handle; `DB` is the app's schema (the RMM server's by default, the call-status service's own). */
export interface DbHandle<DB = Database> {
  readonly db: Kysely<DB>;
  readonly dialect: DbDialect;
  /** Where the data lives, safe to log (no password). */
  readonly location: string;
  /** For the server's Prometheus metrics: the PostgreSQL pool (null on PGlite) and failed queries. */
  readonly stats: DbStats;
  /**
   * The heartbeat batch's way to the database (heartbeat-writer.ts). On PostgreSQL it goes to the pool
   * without Kysely: Kysely's five nested async steps per query (connection provider, driver, logging
   * wrapper, result transform) allocated about 7 KB per heartbeat in fleet-scale, where most batches hold
   * one heartbeat; 7 % of what the server allocates per heartbeat, and young-generation collections come
   * with the allocation (bench/README.md, 2026-11-27, night). On PGlite it goes through Kysely, whose
   * dialect takes its turn on the one connection.
   */
  readonly run: StatementRunner;
  close(): Promise<void>;
}

export interface DbStats {
  pool(): { total: number; idle: number; waiting: number } | null;
  queryErrors(): number;
}

/** Kysely's log hook, counting failed queries; `failed` counts one that went around Kysely. */
function countingErrors(): { log: (event: LogEvent) => void; failed: () => void; count: () => number } {
  let errors = 0;
  return {
    log: (event) => {
      if (event.level === 'error') errors++;
    },
    failed: () => void errors++,
    count: () => errors,
  };
}

/** A StatementRunner that sends through Kysely. */
export function throughKysely(db: Kysely<unknown>): StatementRunner {
  return <Row>(text: string, values: readonly unknown[]) => db.executeQuery<Row>(CompiledQuery.raw(text, [...values])).then((result) => result.rows as Row[]);
}

/** How long a query waits for a PostgreSQL connection (see openPostgres). */
const CONNECT_TIMEOUT_MS = 10_000;
const INT8_OID = 20;
const INT8_ARRAY_OID = 1016;
/** pg's own parsers, typed loosely: its TypeId enum lacks the array types. */
const defaultParser = pg.types.getTypeParser as (oid: number, format?: 'text' | 'binary') => (v: string) => unknown;

export async function createDb<DB = Database>(
  config: { databaseUrl: string | undefined; dataDir: string; pgliteSharedBuffersMb?: number },
  logger: Logger,
  /** The migrations the caller applies next: on a first start a child process applies them already (pglite-seed.ts). */
  migrations?: SeedMigrations,
): Promise<DbHandle<DB>> {
  if (config.databaseUrl) return openPostgres<DB>(config.databaseUrl, logger);
  const dir = path.join(config.dataDir, 'pglite');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // Two processes on one PGlite directory would corrupt it; the lock makes the second one refuse to start.
  const lock = await acquireDataDirLock(config.dataDir);
  try {
    const applied = await fillFromSeed(dir, migrations);
    if (applied) logger.info({ dataDir: dir, applied }, `embedded database created from the seed; ${applied.length} migrations applied`);
    const handle = await openPglite<DB>({ dataDir: dir, settings: sharedBuffers(config.pgliteSharedBuffersMb) });
    return { ...handle, close: once(() => handle.close().finally(() => lock.release())) };
  } catch (err) {
    await lock.release();
    throw err;
  }
}

/**
 * PGlite's WAL settings (its defaults otherwise; it already runs with fsync off, `-F`). Checkpoints come
 * from pglite-upkeep.ts, as PGlite has no checkpointer; these bound what they leave behind and what
 * each WAL byte costs. Measured 2026-11-27 (scratch, PGlite 0.5.16, 16,000 updates of a 34 KB text over
 * 2,000 rows, checkpoints every 64 MB): full page writes doubled the WAL after each checkpoint (1,264
 * against 649 MB); without them and without zero-filling new segments, 694–756 µs of CPU per update
 * against 806–829 with no checkpoints at all, and pg_wal 97 MB against 609.
 * - full_page_writes off: they guard against a page torn by an operating-system crash, which with fsync
 *   off can lose or corrupt the database anyway; a crash of the process alone leaves the kernel every
 *   page it wrote whole, and recovery replays the WAL from the last checkpoint as always.
 * - wal_init_zero off: a new segment is not first written full of zeros (16 MB each).
 * - min/max_wal_size: how many old segments a checkpoint keeps for reuse.
 */
const PGLITE_SETTINGS = ['-c', 'full_page_writes=off', '-c', 'wal_init_zero=off', '-c', 'min_wal_size=32MB', '-c', 'max_wal_size=256MB'];

/** The start parameter for PGlite's buffer pool (PGLITE_SHARED_BUFFERS_MB); none leaves PGlite's default. */
export function sharedBuffers(megabytes: number | undefined): string[] {
  return megabytes ? ['-c', `shared_buffers=${megabytes}MB`] : [];
}

/**
 * PGlite on a directory, or in memory (optionally started from a dump made by `dumpDataDir`).
 * `settings`: further `-c name=value` start parameters after the product's own (the tests' smaller
 * buffer pool, test/helpers/db.ts).
 */
export async function openPglite<DB = Database>(options: { dataDir?: string; loadDataDir?: Blob; settings?: readonly string[] }): Promise<DbHandle<DB>> {
  const pglite = await PGlite.create({
    ...(await pgliteArtifacts()),
    startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS, ...(options.settings ?? [])],
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
  });
  return wrapPglite<DB>(pglite, options.dataDir ? `embedded PGlite in ${options.dataDir}` : 'embedded PGlite in memory');
}

/** A handle over an open PGlite instance; closing the handle closes the instance. */
export function wrapPglite<DB = Database>(pglite: PGlite, location: string): DbHandle<DB> {
  sendLongTextAsBytes(pglite);
  const errors = countingErrors();
  const db = new Kysely<DB>({ dialect: new FairPGliteDialect({ pglite: withTimeSlices(pglite) }), log: errors.log });
  return { db, dialect: 'pglite', location, stats: { pool: () => null, queryErrors: errors.count }, run: throughKysely(db as Kysely<unknown>), close: once(() => db.destroy()) };
}

export function openPostgres<DB = Database>(url: string, logger: Logger, options: { max?: number } = {}): DbHandle<DB> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    // While PostgreSQL is unreachable (not refusing: a host that drops packets), a query waiting for a
    // connection fails after this long (503 to the client) instead of holding its request for minutes.
    // It also bounds the wait for a free pooled connection, which takes this long only when overloaded.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // int8 (ids, counters, count(*)) as numbers, as PGlite returns them; exact below 2^53.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
        if (oid === INT8_OID) return (v: string) => Number(v);
        if (oid === INT8_ARRAY_OID) {
          const parseTextArray = defaultParser(INT8_ARRAY_OID) as (v: string) => (string | null)[];
          return (v: string) => parseTextArray(v).map((x) => (x === null ? null : Number(x)));
        }
        return defaultParser(oid, format);
      }) as typeof pg.types.getTypeParser,
    },
  });
  watchConnections(pool, logger);
  pool.on('connect', preparingRegisteredTexts);
  const errors = countingErrors();
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), log: errors.log });
  const stats: DbStats = { pool: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }), queryErrors: errors.count };
  const run: StatementRunner = <Row>(text: string, values: readonly unknown[]) => {
    const name = preparedNameOf(text);
    // pg reads the values and never changes them.
    const config = { text, values: values as unknown[] };
    return pool.query(name === undefined ? config : { name, ...config }).then(
      (result) => result.rows as Row[],
      (err: unknown) => {
        errors.failed();
        throw err;
      },
    );
  };
  return { db, dialect: 'postgres', location: `PostgreSQL ${describeUrl(url)}`, stats, run, close: once(() => db.destroy()) };
}

/**
 * pg emits 'error' on a Client whose connection dies: a PostgreSQL restart ends every session with 57P01
 * and closes the socket. pg-pool listens only while a client is idle and re-emits that on the pool, so a
 * client checked out at that moment (in a query or a transaction, between a query and its release) had
 * no listener, and the process died with "Unhandled 'error' event" (issue 29: 6 restarts of 7 under
 * heartbeat load). Every client gets a listener of its own as the pool creates it. Nothing else is
 * needed to recover: the query in flight fails by itself (its request answers 503), a client that lost
 * its connection is not queryable and the pool drops it on release, and the next query connects anew.
 */
function watchConnections(pool: pg.Pool, logger: Logger): void {
  // While PostgreSQL is away every client reports it, hundreds a second under load: one line per 10 s.
  const outage = new LogThrottle(logger, { windowMs: 10_000 });
  let lostAt: number | undefined;
  const lost = (err: Error) => {
    lostAt ??= Date.now();
    outage.warn('connection-lost', { error: failureSummary(err) }, 'PostgreSQL connection lost; queries fail until it is back, then the pool reconnects by itself');
  };
  pool.on('error', lost);
  pool.on('connect', (client) => {
    client.on('error', lost);
    if (lostAt === undefined) return;
    logger.info({ lost_for_ms: Date.now() - lostAt }, 'PostgreSQL connection re-established');
    lostAt = undefined;
  });
}

/** host:port/database of a connection URL, without credentials. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return '(unparseable URL)';
  }
}

/** Closing twice (a failed start-up path, then shutdown) must not fail the second time. */
function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}
