// The databases a benchmark runs the real server on: PGlite in a data directory on disk, as the default
// install keeps it, and a throw-away PostgreSQL database created for the run (like the tests do); both
// removed afterwards.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config/env.js';
import { openPglite, openPostgres, sharedBuffers, type DbHandle } from '../../src/db/create-db.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { createLogger } from '../../src/platform/logger.js';
import { createDatabase, dropDatabase, withDatabase } from '../../test/helpers/postgres-admin.js';

export const DEFAULT_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export type Backend = 'pglite' | 'postgres';

/**
 * Until 2026-11-26 (evening) this was PGlite in memory, which the product never runs: its in-memory file
 * system grows a file by copying it whole (by an eighth at a time past 1 MiB), and at 10,000 agents that
 * copying was the server's largest single cost in a CPU profile.
 */
export async function openPgliteBench(): Promise<DbHandle> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-bench-pglite-'));
  // The product's buffer pool, PGLITE_SHARED_BUFFERS_MB as the server reads it.
  const handle = await openPglite({ dataDir: dir, settings: sharedBuffers(loadConfig({ PGLITE_SHARED_BUFFERS_MB: process.env.PGLITE_SHARED_BUFFERS_MB }).pgliteSharedBuffersMb) });
  await migrateToLatest(handle);
  return { ...handle, location: `${handle.location} (on disk, as installed)`, close: () => handle.close().finally(() => rm(dir, { recursive: true, force: true })) };
}

/**
 * The PostgreSQL admin URL to use, or the reason there is none: BENCH_DATABASE_URL (`off` disables),
 * else the local default when it answers.
 */
export async function postgresAdminUrl(env: NodeJS.ProcessEnv): Promise<{ url?: string; reason?: string }> {
  const configured = env.BENCH_DATABASE_URL?.trim();
  if (configured === 'off' || configured === '') return { reason: 'BENCH_DATABASE_URL=off' };
  const url = configured ?? DEFAULT_ADMIN_URL;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return { url };
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return { reason: `PostgreSQL at ${redact(url)} not reachable (${why}); set BENCH_DATABASE_URL to an admin URL` };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A fresh, migrated database on the server; closing the handle drops it. */
export async function openPostgresBench(adminUrl: string): Promise<DbHandle> {
  const name = await createDatabase({ adminUrl, prefix: `rmm_bench_${process.pid}` });
  const handle = openPostgres(withDatabase(adminUrl, name), createLogger({ level: 'silent' }));
  const close = () => handle.close().finally(() => dropDatabase(adminUrl, name));
  try {
    await migrateToLatest(handle);
  } catch (err) {
    await close();
    throw err;
  }
  return { ...handle, close };
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
}
