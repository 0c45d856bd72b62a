// A freshly migrated database for one test file: PGlite loaded from the run's dump, or a PostgreSQL
// database cloned from the run's template (dropped again on close).
import { readFile } from 'node:fs/promises';
import { inject } from 'vitest';
import { openPglite, openPostgres, type DbHandle } from '../../src/db/create-db.js';
import { createLogger } from '../../src/platform/logger.js';
import { createDatabase, dropDatabase, withDatabase } from './postgres-admin.js';

export function testDbKind(): 'pglite' | 'postgres' {
  return inject('testDb').kind;
}

export async function createTestDb(): Promise<DbHandle> {
  const plan = inject('testDb');
  if (plan.kind === 'pglite') {
    return openPglite({ loadDataDir: new Blob([await readFile(plan.dumpFile)]) });
  }
  const name = await createDatabase(plan, plan.template);
  const handle = openPostgres(withDatabase(plan.adminUrl, name), createLogger({ level: 'silent' }));
  return { ...handle, close: () => handle.close().finally(() => dropDatabase(plan.adminUrl, name)) };
}

/** An empty (unmigrated) PostgreSQL database URL for tests that start a whole server; undefined on PGlite. */
export async function createEmptyPostgresUrl(): Promise<{ url: string; drop(): Promise<void> } | undefined> {
  const plan = inject('testDb');
  if (plan.kind === 'pglite') return undefined;
  const name = await createDatabase(plan);
  return { url: withDatabase(plan.adminUrl, name), drop: () => dropDatabase(plan.adminUrl, name) };
}
