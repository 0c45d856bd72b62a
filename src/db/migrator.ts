// Runs the frozen migrations of migrations/index.ts in order, telling each one the dialect and whether
// TimescaleDB can be used. On PostgreSQL Kysely holds an advisory lock, so two servers starting at once
// do not both migrate.
import { sql, type Kysely } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import { callstatusMigrations } from '../../migrations/callstatus/index.js';
import { migrations, type MigrationFactory, type MigrationContext } from '../../migrations/index.js';
import type { DbHandle } from './create-db.js';

export interface MigrationReport {
  applied: string[];
  timescale: boolean;
}

/** One app's migrations and the tables that record them (apps may share a PostgreSQL database). */
export interface MigrationSet {
  list: ReadonlyArray<readonly [name: string, factory: MigrationFactory]>;
  tableName: string;
  lockTableName: string;
}

export const RMM_MIGRATIONS: MigrationSet = { list: migrations, tableName: 'kysely_migration', lockTableName: 'kysely_migration_lock' };
export const CALLSTATUS_MIGRATIONS: MigrationSet = {
  list: callstatusMigrations,
  tableName: 'callstatus_migration',
  lockTableName: 'callstatus_migration_lock',
};

class ListedMigrations implements MigrationProvider {
  constructor(
    private readonly list: MigrationSet['list'],
    private readonly ctx: MigrationContext,
  ) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    return Object.fromEntries(this.list.map(([name, factory]) => [name, factory(this.ctx)]));
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any app's schema
export async function migrateToLatest(handle: DbHandle<any>, set: MigrationSet = RMM_MIGRATIONS): Promise<MigrationReport> {
  const timescale = handle.dialect === 'postgres' && (await timescaleUsable(handle.db));
  const migrator = new Migrator({
    db: handle.db,
    provider: new ListedMigrations(set.list, { dialect: handle.dialect, timescale }),
    migrationTableName: set.tableName,
    migrationLockTableName: set.lockTableName,
  });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error) {
    const failed = results.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return { applied: results.filter((r) => r.status === 'Success').map((r) => r.migrationName), timescale };
}

/**
 * Applies the migrations up to and including `name` (restoring rows written under it), no further.
 * `handle.db` may be a transaction (a restore's): the migrations then commit or roll back with it.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any app's schema, or one being built
export async function migrateTo(handle: { db: Kysely<any>; dialect: DbHandle['dialect'] }, name: string): Promise<void> {
  const timescale = handle.dialect === 'postgres' && (await timescaleUsable(handle.db));
  const migrator = new Migrator({
    db: handle.db,
    provider: new ListedMigrations(RMM_MIGRATIONS.list, { dialect: handle.dialect, timescale }),
    migrationTableName: RMM_MIGRATIONS.tableName,
    migrationLockTableName: RMM_MIGRATIONS.lockTableName,
  });
  const { error, results = [] } = await migrator.migrateTo(name);
  if (error) throw new Error(`migration ${results.find((r) => r.status === 'Error')?.migrationName ?? 'unknown'} failed: ${String(error)}`, { cause: error });
}

/**
 * TimescaleDB is usable when the extension is already installed in this database, or when it is
 * available and preloaded (CREATE EXTENSION fails without shared_preload_libraries).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- runs before any table is known
async function timescaleUsable(db: Kysely<any>): Promise<boolean> {
  const { rows } = await sql<{ usable: boolean }>`
    select exists (select 1 from pg_extension where extname = 'timescaledb')
        or (exists (select 1 from pg_available_extensions where name = 'timescaledb')
            and coalesce(current_setting('shared_preload_libraries', true), '') like '%timescaledb%') as usable
  `.execute(db);
  return rows[0]?.usable === true;
}
