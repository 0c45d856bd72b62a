// Which databases a benchmark runs on (BENCH_BACKENDS, default both), each opened fresh and closed after.
import type { DbHandle } from '../../src/db/create-db.js';
import { openPgliteBench, openPostgresBench, postgresAdminUrl, type Backend } from './databases.js';

export function backendsFrom(env: NodeJS.ProcessEnv): Backend[] {
  const backends = (env.BENCH_BACKENDS ?? 'pglite,postgres').split(',').map((s) => s.trim());
  for (const b of backends) if (b !== 'pglite' && b !== 'postgres') throw new Error(`BENCH_BACKENDS: unknown ${b}`);
  return backends as Backend[];
}

/** Opens the backend's database, or says why it is skipped. */
export async function openBackend(backend: Backend, env: NodeJS.ProcessEnv): Promise<DbHandle | string> {
  if (backend === 'pglite') return openPgliteBench();
  const admin = await postgresAdminUrl(env);
  return admin.url ? openPostgresBench(admin.url) : `skipped: ${admin.reason}`;
}

export function positiveNumber(env: NodeJS.ProcessEnv, key: string, fallback: number): number {
  const raw = env[key];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${key} must be a positive number, got ${raw}`);
  return value;
}

export { percentiles } from '../../src/platform/percentiles.js';
