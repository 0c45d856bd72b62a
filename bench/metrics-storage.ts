// B6, bytes per stored sample: agents with days of 60 s heartbeats (the FreeBSD fixture's 27 samples
// each), measured as table + index + TOAST bytes divided by samples, in the recent form and after the
// real compaction. Baseline, in the same database and run: the same samples in a naive narrow table
// (one (series, time, value) row per sample, indexed on series and time, plus its series table).
// Issue target on PostgreSQL: ≤ 20 bytes per sample after compaction (a naive row is ~60+). Measured,
// never asserted.
//
// Environment: BENCH_BACKENDS (PostgreSQL when it answers, else pglite), BENCH_DATABASE_URL, BENCH_STORAGE_AGENTS (10),
// BENCH_STORAGE_DAYS (3).
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { backendsFrom, openBackend, positiveNumber } from './lib/backends.js';
import { compactBefore, createNaiveTable, fillNaiveFrom, seedAgentHistory } from './lib/metric-data.js';
import { runWhenMain, type BenchRow } from './lib/table.js';

export const name = 'metrics-storage';
const log = (message: string) => process.stderr.write(`[${name}] ${message}\n`);
const HOUR_MS = 3_600_000;

/** Bytes of the tables (with indexes and TOAST) per sample they hold. */
async function bytesPerSample(db: Kysely<Database>, tables: string[], samples: number): Promise<number> {
  await sql`vacuum analyze`.execute(db).catch(() => undefined); // settles free-space maps; sizes are what matters
  let bytes = 0;
  for (const table of tables) {
    const { rows } = await sql<{ bytes: number }>`select pg_total_relation_size(${table}::regclass)::int8 as bytes`.execute(db);
    bytes += rows[0]?.bytes ?? 0;
  }
  return bytes / samples;
}

async function count(db: Kysely<Database>, query: RawBuilder<{ n: number | string | null }>): Promise<number> {
  const { rows } = await query.execute(db);
  return Number(rows[0]?.n ?? 0);
}

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const agents = Math.round(positiveNumber(env, 'BENCH_STORAGE_AGENTS', 10));
  const days = Math.round(positiveNumber(env, 'BENCH_STORAGE_DAYS', 3));
  const rows: BenchRow[] = [];
  for (const backend of await backendsFrom(env)) {
    const handle = await openBackend(backend, env);
    const base = { benchmark: name, backend, unit: 'bytes/sample', baselineLabel: 'naive row bytes', better: 'lower' as const };
    if (typeof handle === 'string') {
      rows.push({ ...base, setting: 'compacted', figure: Number.NaN, baseline: Number.NaN, note: handle });
      continue;
    }
    try {
      const db = handle.db;
      const end = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS);
      log(`${backend}: seeding ${agents} agents × ${days} days of 60 s heartbeats`);
      const seeded = [];
      for (let i = 0; i < agents; i++) seeded.push(await seedAgentHistory(db, end, days));
      const samples = await count(db, sql<{ n: number }>`select sum(cardinality(vals))::int8 as n from metric_points`);
      const recent = await bytesPerSample(db, ['metric_points', 'metric_layouts'], samples);

      await createNaiveTable(db);
      for (const agent of seeded) await fillNaiveFrom(db, agent.id, null);
      const naive = await bytesPerSample(db, ['naive_samples', 'naive_series'], await count(db, sql<{ n: number }>`select count(*) as n from naive_samples`));
      await sql`drop table naive_samples, naive_series`.execute(db);

      await compactBefore(db, new Date(end.getTime() + HOUR_MS));
      const compactedSamples = await count(db, sql<{ n: number }>`select sum(sample_count)::int8 as n from metric_hours`);
      const compacted = await bytesPerSample(db, ['metric_hours'], compactedSamples);
      const setting = `${agents} agents × ${days} days`;
      log(`${backend}: ${samples} samples; recent ${recent.toFixed(1)}, compacted ${compacted.toFixed(1)}, naive ${naive.toFixed(1)} bytes/sample`);
      rows.push({ ...base, setting: `compacted, ${setting}`, figure: compacted, baseline: naive, note: compactedSamples === samples ? undefined : `compacted ${compactedSamples} of ${samples} samples` });
      rows.push({ ...base, setting: `recent form, ${setting}`, figure: recent, baseline: naive });
    } finally {
      await handle.close();
    }
  }
  return rows;
}

runWhenMain(import.meta.url, () => run());
