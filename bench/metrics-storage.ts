// B6, bytes per stored sample: agents with days of 60 s heartbeats (the FreeBSD fixture's 27 samples
// each), measured as table + index + TOAST bytes divided by samples, in the recent form and after the
// real compaction. Baseline, in the same database and run: the same samples in a naive narrow table
// (one (series, time, value) row per sample, indexed on series and time, plus its series table).
// Issue target on PostgreSQL: ≤ 20 bytes per sample after compaction (a naive row is ~60+). Measured,
// never asserted.
//
// Environment: BENCH_BACKENDS (PostgreSQL when it answers, else pglite), BENCH_DATABASE_URL, BENCH_STORAGE_AGENTS (10),
// BENCH_STORAGE_DAYS (3), BENCH_STORAGE_RUNS (3 runs, each the product's forms and the naive rows in turn on
// emptied tables; the ratios are the medians of each run's).
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { backendsFrom, openBackend, positiveNumber } from './lib/backends.js';
import { compactBefore, createNaiveTable, fillNaiveFrom, seedAgentHistory } from './lib/metric-data.js';
import { median, medianRatio } from './lib/stats.js';
import { runWhenMain, type BenchRow, type Target } from './lib/table.js';

export const name = 'metrics-storage';
const log = (message: string) => process.stderr.write(`[${name}] ${message}\n`);
const HOUR_MS = 3_600_000;
/** Issue target on PostgreSQL: the compacted figure itself ≤ 20 bytes per sample. */
const TARGET_COMPACTED: Target = { op: '≤', value: 20, of: 'figure' };

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

interface Sizes {
  samples: number;
  compactedSamples: number;
  recent: number;
  compacted: number;
  naive: number;
}

/** One run on empty tables: the product's recent form, then the naive rows, then the product compacted. */
async function measureOnce(db: Kysely<Database>, agents: number, days: number): Promise<Sizes> {
  await sql`truncate metric_points, metric_hours`.execute(db);
  const end = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS);
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
  return { samples, compactedSamples, recent, compacted, naive };
}

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const agents = Math.round(positiveNumber(env, 'BENCH_STORAGE_AGENTS', 10));
  const days = Math.round(positiveNumber(env, 'BENCH_STORAGE_DAYS', 3));
  const runs = Math.round(positiveNumber(env, 'BENCH_STORAGE_RUNS', 3));
  const rows: BenchRow[] = [];
  for (const backend of await backendsFrom(env)) {
    const handle = await openBackend(backend, env);
    const base = { benchmark: name, backend, unit: 'bytes/sample', baselineLabel: 'naive row bytes', better: 'lower' as const };
    if (typeof handle === 'string') {
      rows.push({ ...base, setting: 'compacted', figure: Number.NaN, baseline: Number.NaN, note: handle });
      continue;
    }
    try {
      const all: Sizes[] = [];
      for (let r = 1; r <= runs; r++) {
        log(`${backend}: run ${r}/${runs}, seeding ${agents} agents × ${days} days of 60 s heartbeats`);
        const sizes = await measureOnce(handle.db, agents, days);
        log(`${backend}: ${sizes.samples} samples; recent ${sizes.recent.toFixed(1)}, compacted ${sizes.compacted.toFixed(1)}, naive ${sizes.naive.toFixed(1)} bytes/sample`);
        all.push(sizes);
      }
      const m = (pick: (s: Sizes) => number) => median(all.map(pick));
      const pairs = (pick: (s: Sizes) => number) => medianRatio(all.map(pick), all.map((s) => s.naive));
      const each = (pick: (s: Sizes) => number) => `${runs} runs, each product then naive on emptied tables: ${all.map((s) => `${pick(s).toFixed(1)}/${s.naive.toFixed(1)}`).join(', ')}`;
      const setting = `${agents} agents × ${days} days`;
      const lost = all.filter((s) => s.compactedSamples !== s.samples).map((s) => `compacted ${s.compactedSamples} of ${s.samples} samples`);
      rows.push({
        ...base,
        setting: `compacted, ${setting}`,
        figure: m((s) => s.compacted),
        baseline: m((s) => s.naive),
        ratio: pairs((s) => s.compacted),
        ...(backend === 'postgres' ? { target: TARGET_COMPACTED } : {}),
        note: `${each((s) => s.compacted)}${lost.length ? `; ${lost.join('; ')}` : ''}${backend === 'postgres' ? '' : '; the 20-byte target is on PostgreSQL'}`,
      });
      rows.push({ ...base, setting: `recent form, ${setting}`, figure: m((s) => s.recent), baseline: m((s) => s.naive), ratio: pairs((s) => s.recent), note: `${each((s) => s.recent)}; no target` });
    } finally {
      await handle.close();
    }
  }
  return rows;
}

runWhenMain(import.meta.url, () => run());
