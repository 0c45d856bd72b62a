// A freshly migrated database for one test file: PGlite loaded from the run's dump, or a PostgreSQL
// database cloned from the run's template (dropped again on close).
import { mkdir, readFile } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { inject } from 'vitest';
import { openPglite, openPostgres, wrapPglite, type DbHandle } from '../../src/db/create-db.js';
import { migrateToLatest, RMM_MIGRATIONS, type MigrationSet } from '../../src/db/migrator.js';
import { pgliteArtifacts } from '../../src/db/pglite-artifacts.js';
import { createLogger } from '../../src/platform/logger.js';
import { createDatabase, dropDatabase, withDatabase } from './postgres-admin.js';

/**
 * Start parameters of the tests' embedded databases. PostgreSQL's 128 MB of shared buffers (PGlite keeps
 * the default) are set up in WebAssembly memory at every start: loading the run's dump took 1.4–2.0 s of
 * CPU with them and 0.9–1.3 s with 16 MB (2026-11-28, three rounds), and the PGlite pass loads one or more
 * per test file. A test database holds a few MB, so the smaller pool caches all of it all the same.
 */
export const TEST_PGLITE_SETTINGS = ['-c', 'shared_buffers=16MB'] as const;
/** The same for a PGlite made directly (PGlite.create), not through openPglite. */
const TEST_START_PARAMS = [...PGlite.defaultStartParams, ...TEST_PGLITE_SETTINGS];

export function testDbKind(): 'pglite' | 'postgres' {
  return inject('testDb').kind;
}

/** The run's dump, read once per worker process (a Blob is immutable: every database loads from the same one). */
let dumpBlob: { file: string; blob: Promise<Blob> } | undefined;
function runDump(file: string): Promise<Blob> {
  if (dumpBlob?.file !== file) dumpBlob = { file, blob: readFile(file).then((bytes) => new Blob([bytes])) };
  return dumpBlob.blob;
}

export async function createTestDb(): Promise<DbHandle> {
  const plan = inject('testDb');
  if (plan.kind === 'pglite') {
    return openPglite({ loadDataDir: await runDump(plan.dumpFile), settings: TEST_PGLITE_SETTINGS });
  }
  const name = await createDatabase(plan, plan.template);
  const handle = openPostgres(withDatabase(plan.adminUrl, name), createLogger({ level: 'silent' }));
  return { ...handle, close: () => handle.close().finally(() => dropDatabase(plan.adminUrl, name)) };
}

/**
 * A PostgreSQL database of its own for a whole server or app process: empty, or (`migrated`) cloned
 * from the run's migrated template. Undefined on the PGlite pass.
 */
export async function createPostgresUrl(state: 'empty' | 'migrated' = 'empty'): Promise<{ url: string; drop(): Promise<void> } | undefined> {
  const plan = inject('testDb');
  if (plan.kind === 'pglite') return undefined;
  const name = await createDatabase(plan, state === 'migrated' ? plan.template : undefined);
  return { url: withDatabase(plan.adminUrl, name), drop: () => dropDatabase(plan.adminUrl, name) };
}

/**
 * Two connection pools on one migrated PostgreSQL database of their own, for tests that race two
 * transactions (the embedded database has one connection, so nothing races there: PostgreSQL pass only).
 */
export async function racingConnections(): Promise<{ first: DbHandle; second: DbHandle; close(): Promise<void> }> {
  const db = (await createPostgresUrl('migrated'))!;
  const first = openPostgres(db.url, createLogger({ level: 'silent' }));
  const second = openPostgres(db.url, createLogger({ level: 'silent' }));
  return {
    first,
    second,
    close: async () => {
      await Promise.all([first.close(), second.close()]);
      await db.drop();
    },
  };
}

/**
 * Writes a migrated embedded data directory at `dir` (where a process on DATA_DIR opens it): the run's
 * dump for the RMM schema; another set of migrations is applied in memory first.
 */
export async function writeMigratedPglite(dir: string, set: MigrationSet = RMM_MIGRATIONS): Promise<void> {
  const plan = inject('testDb');
  if (plan.kind !== 'pglite') throw new Error('writeMigratedPglite is for the PGlite pass');
  let dump: Blob;
  if (set === RMM_MIGRATIONS) {
    dump = await runDump(plan.dumpFile);
  } else {
    const memory = await PGlite.create({ ...(await pgliteArtifacts()), startParams: TEST_START_PARAMS });
    const handle = wrapPglite(memory, 'migration template');
    await migrateToLatest(handle, set);
    dump = await memory.dumpDataDir('none');
    await handle.close();
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const disk = await PGlite.create({ ...(await pgliteArtifacts()), dataDir: dir, loadDataDir: dump, startParams: TEST_START_PARAMS });
  await disk.close();
}
