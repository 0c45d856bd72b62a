// Which databases a benchmark runs on, each opened fresh and closed after. BENCH_BACKENDS picks them
// (`pglite`, `postgres` or both); unset, it is PostgreSQL when a server answers, PGlite otherwise.
import type { DbHandle } from '../../src/db/create-db.js';
import { openPgliteBench, openPostgresBench, postgresAdminUrl, type Backend } from './databases.js';

export interface BackendChoice {
  backends: Backend[];
  /** One line for the output: which database and why. */
  reason: string;
}

const probes = new Map<string, Promise<BackendChoice>>();

/** The backends of this run; the PostgreSQL probe runs once per process and setting. */
export function chooseBackends(env: NodeJS.ProcessEnv): Promise<BackendChoice> {
  const key = `${env.BENCH_BACKENDS ?? ''}|${env.BENCH_DATABASE_URL ?? ''}`;
  let probe = probes.get(key);
  if (!probe) {
    probe = probeBackends(env);
    probes.set(key, probe);
  }
  return probe;
}

async function probeBackends(env: NodeJS.ProcessEnv): Promise<BackendChoice> {
  const listed = env.BENCH_BACKENDS?.trim();
  if (listed) {
    const backends = listed.split(',').map((s) => s.trim());
    for (const b of backends) if (b !== 'pglite' && b !== 'postgres') throw new Error(`BENCH_BACKENDS: unknown ${b}`);
    return { backends: backends as Backend[], reason: `BENCH_BACKENDS=${listed}` };
  }
  const admin = await postgresAdminUrl(env);
  if (admin.url) return { backends: ['postgres'], reason: 'PostgreSQL answers, so benchmarks run on it (BENCH_BACKENDS=pglite,postgres for both)' };
  return { backends: ['pglite'], reason: `embedded PGlite: ${admin.reason}` };
}

export async function backendsFrom(env: NodeJS.ProcessEnv): Promise<Backend[]> {
  return (await chooseBackends(env)).backends;
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

/** Node flags for the servers under test from `key` (space-separated, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`); none when unset. */
export function nodeFlags(env: NodeJS.ProcessEnv, key: string): string[] {
  return (env[key] ?? '').split(/\s+/).filter(Boolean);
}

export { percentiles } from '../../src/platform/percentiles.js';
