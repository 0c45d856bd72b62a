// Synthetic metric history for the metric benchmarks, written straight into the real tables the way the
// heartbeat path writes them (one metric_points row per heartbeat, with the FreeBSD fixture's layout of
// 27 samples), then compacted by the real maintenance code. Also the naive baseline: one row per sample
// in a narrow table with the index its query needs.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { extractSamples } from '../../src/modules/metrics/extract-samples.js';
import { LayoutRegistry } from '../../src/modules/metrics/layouts.js';
import { MetricsMaintenance } from '../../src/modules/metrics/maintenance.js';
import { allSamples } from '../../src/modules/metrics/sample-sources.js';
import { systemClock } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/logger.js';
import { DEFAULT_FIXTURE } from './heartbeat-body.js';

export const SAMPLE_INTERVAL_S = 60;
const DAY_MS = 86_400_000;

export interface SeededAgent {
  id: string;
  layout: number;
  samplesPerHeartbeat: number;
}

/** An agent with `days` of heartbeats every 60 s, ending at `end`; values move smoothly per position. */
export async function seedAgentHistory(db: Kysely<Database>, end: Date, days: number): Promise<SeededAgent> {
  const id = randomBytes(16).toString('hex');
  await db.insertInto('agents').values({ id, name: `bench-${id.slice(0, 8)}`, hostname: 'bench', platform: 'freebsd' }).execute();
  const samples = extractSamples(JSON.parse(readFileSync(DEFAULT_FIXTURE, 'utf8')) as Record<string, unknown>);
  const [layout] = await new LayoutRegistry(db).idsFor([samples]);
  const heartbeats = Math.round((days * DAY_MS) / (SAMPLE_INTERVAL_S * 1000));
  const start = new Date(end.getTime() - days * DAY_MS);
  // In slices, so no single statement holds millions of values.
  for (let first = 0; first < heartbeats; first += 20_000) {
    await sql`
      insert into metric_points (agent_id, time, layout, vals)
      select ${id}, ${start}::timestamptz + g * interval '60 seconds', ${layout}::int,
             array(select round((50 + 40 * sin(g / 30.0 + i))::numeric, 2)::float8 from generate_series(1, ${samples.length}::int) as i)
      from generate_series(${first}::int, ${Math.min(first + 20_000, heartbeats) - 1}::int) as g`.execute(db);
  }
  return { id, layout: layout!, samplesPerHeartbeat: samples.length };
}

/** Runs the real compaction for everything older than `before`. */
export async function compactBefore(db: Kysely<Database>, before: Date): Promise<number> {
  const maintenance = new MetricsMaintenance(db, systemClock, createLogger({ level: 'silent' }), { retentionDays: 36_500, compressAfterDays: 1 });
  const { compactedRows } = await maintenance.compactAndExpire(before, new Date(0));
  return compactedRows;
}

/**
 * The naive design at its leanest: one narrow row per sample, (series int, time, value), indexed on
 * (series, time), with the agent/metric/label of each series in a small side table.
 */
export async function createNaiveTable(db: Kysely<Database>): Promise<void> {
  await sql`create table naive_series (id serial primary key, agent_id text not null, metric text not null, label text not null, unique (agent_id, metric, label))`.execute(db);
  await sql`create table naive_samples (series int not null, time timestamptz not null, value float8 not null)`.execute(db);
  await sql`create index naive_samples_idx on naive_samples (series, time)`.execute(db);
}

/** Copies an agent's samples (all, or one metric) into the naive table, read as the API reads them. */
export async function fillNaiveFrom(db: Kysely<Database>, agentId: string, metric: string | null): Promise<void> {
  const everything = { agentId, metrics: metric === null ? null : [metric], label: null, from: new Date(0), to: new Date('9999-12-31T23:59:59Z') };
  await sql`
    insert into naive_series (agent_id, metric, label)
    select distinct ${agentId}, metric, label from (${allSamples(everything)}) as s`.execute(db);
  await sql`
    insert into naive_samples
    select n.id, s.time, s.value from (${allSamples(everything)}) as s
    join naive_series as n on n.agent_id = ${agentId} and n.metric = s.metric and n.label = s.label`.execute(db);
  await sql`analyze naive_samples`.execute(db);
}
