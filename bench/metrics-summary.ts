// B5, the 90-day summary: one agent, one metric, a sample every 60 s for 90 days (the last 7 days in
// the recent form, the rest compacted by the real maintenance code), summarised into 1-hour buckets by
// the real query. Baseline, in the same database and run: the same samples in a naive narrow table
// (one (series, time, value) row per sample, indexed on series and time) summarised by a plain GROUP BY.
// Issue target on PostgreSQL: ≤ 50 ms. Measured, never asserted.
//
// Environment: BENCH_BACKENDS (PostgreSQL when it answers, else pglite), BENCH_DATABASE_URL, BENCH_SUMMARY_DAYS (90),
// BENCH_SUMMARY_RUNS (30 timed runs of each query, alternating ours and the naive one, after 5 untimed ones).
import { sql, type Kysely } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { summarize } from '../src/modules/metrics/metrics.repo.js';
import { backendsFrom, openBackend, positiveNumber } from './lib/backends.js';
import { compactBefore, createNaiveTable, fillNaiveFrom, seedAgentHistory } from './lib/metric-data.js';
import { timeInterleaved } from './lib/stats.js';
import { runWhenMain, type BenchRow, type Target } from './lib/table.js';

export const name = 'metrics-summary';
const log = (message: string) => process.stderr.write(`[${name}] ${message}\n`);
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const METRIC = 'cpu_usage';
/** Issue target on PostgreSQL: the summary's p50 itself ≤ 50 ms. */
const TARGET_P50: Target = { op: '≤', value: 50, of: 'figure' };

function naiveSummary(db: Kysely<Database>, agentId: string, from: Date, to: Date) {
  return sql`
    select to_timestamp(floor(extract(epoch from time) / 3600) * 3600) as bucket,
           avg(value), min(value), max(value), count(*)
    from naive_samples
    where series = (select id from naive_series where agent_id = ${agentId} and metric = ${METRIC} and label = '')
      and time between ${from} and ${to}
    group by 1 order by 1`.execute(db);
}

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const days = Math.round(positiveNumber(env, 'BENCH_SUMMARY_DAYS', 90));
  const runs = Math.round(positiveNumber(env, 'BENCH_SUMMARY_RUNS', 30));
  const rows: BenchRow[] = [];
  for (const backend of await backendsFrom(env)) {
    const handle = await openBackend(backend, env);
    const base = { benchmark: name, backend, setting: `${days} days, 1-hour buckets`, unit: 'ms', baselineLabel: 'naive table ms', better: 'lower' as const };
    if (typeof handle === 'string') {
      rows.push({ ...base, figure: Number.NaN, baseline: Number.NaN, note: handle });
      continue;
    }
    try {
      const db = handle.db;
      const end = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS);
      log(`${backend}: seeding ${days} days of 60 s heartbeats for one agent`);
      const agent = await seedAgentHistory(db, end, days);
      const compacted = await compactBefore(db, new Date(end.getTime() - 7 * DAY_MS));
      await createNaiveTable(db);
      await fillNaiveFrom(db, agent.id, METRIC);
      await sql`vacuum analyze`.execute(db); // as autovacuum would after compaction
      log(`${backend}: ${compacted} heartbeat rows compacted; timing ${runs} runs of each query`);
      const filter = { agentId: agent.id, metrics: [METRIC], label: null, from: new Date(end.getTime() - days * DAY_MS), to: end };
      const { a: ours, b: naive, ratio } = await timeInterleaved(
        runs,
        async () => (await summarize(db, filter, 3600)).length,
        async () => (await naiveSummary(db, agent.id, filter.from, filter.to)).rows.length,
      );
      log(`${backend}: ours p50 ${ours.p50.toFixed(1)} ms (${ours.result} buckets), naive p50 ${naive.p50.toFixed(1)} ms (${naive.result} buckets)`);
      rows.push({
        ...base,
        figure: ours.p50,
        baseline: naive.p50,
        ratio,
        ...(backend === 'postgres' ? { target: TARGET_P50 } : {}),
        p50Ms: ours.p50,
        p99Ms: ours.p99,
        note:
          `${runs} runs of each query, alternating; ratio = median of the pairs' ratios; naive p99 ${naive.p99.toFixed(1)} ms` +
          (backend === 'postgres' ? '' : '; the 50 ms target is on PostgreSQL') +
          (ours.result === naive.result ? '' : `; bucket counts differ: ${ours.result} vs naive ${naive.result}`),
      });
    } finally {
      await handle.close();
    }
  }
  return rows;
}

runWhenMain(import.meta.url, () => run());
