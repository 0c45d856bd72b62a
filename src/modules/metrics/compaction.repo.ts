// The project's own compaction and retention for plain PostgreSQL and PGlite (TimescaleDB does both
// itself, see timescale.ts). Each statement handles a batch of agents through the (agent_id, time)
// index (compacted hours by their hour index), so a run never scans a whole table, and each statement is atomic: a sample is either
// still in metric_points or already in metric_hours, never both, never neither.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

type Db = Kysely<Database>;

/**
 * Moves the agents' metric_points rows older than `before` into metric_hours: one row per agent,
 * metric, label and UTC hour, with offsets and values in time order and the hour's count/sum/min/max.
 * An hour that already has a row (samples that arrived after it was compacted) is merged into it.
 * Returns how many heartbeat rows were moved.
 */
export async function compactPoints(db: Db, agentIds: readonly string[], before: Date): Promise<number> {
  const { rows } = await sql<{ moved: number }>`
    with moved as (
      delete from metric_points
      where agent_id = any(${sql.val(agentIds)}::text[]) and time < ${before}
      returning agent_id, time, layout, vals
    ),
    samples as (
      select m.agent_id, s.metric, s.label, date_trunc('hour', m.time, 'UTC') as hour, m.time, m.vals[s.i::int] as value
      from moved as m
      join metric_layouts as l on l.id = m.layout
      cross join lateral unnest(l.metrics, l.labels) with ordinality as s(metric, label, i)
    ),
    hours as (
      select agent_id, metric, label, hour,
             array_agg(round(extract(epoch from time - hour) * 1000)::int order by time) as offsets_ms,
             array_agg(value order by time) as vals,
             count(*)::int as sample_count, sum(value) as value_sum, min(value) as value_min, max(value) as value_max
      from samples
      group by agent_id, metric, label, hour
    ),
    stored as (
      insert into metric_hours as h (agent_id, metric, label, hour, offsets_ms, vals, sample_count, value_sum, value_min, value_max)
      select * from hours
      on conflict (agent_id, metric, label, hour) do update set
        (offsets_ms, vals) = (
          select array_agg(u.ms order by u.ms, u.value), array_agg(u.value order by u.ms, u.value)
          from unnest(h.offsets_ms || excluded.offsets_ms, h.vals || excluded.vals) as u(ms, value)
        ),
        sample_count = h.sample_count + excluded.sample_count,
        value_sum = h.value_sum + excluded.value_sum,
        value_min = least(h.value_min, excluded.value_min),
        value_max = greatest(h.value_max, excluded.value_max)
    )
    select count(*)::int8 as moved from moved`.execute(db);
  return rows[0]?.moved ?? 0;
}

/** Deletes the agents' recent-form samples older than `cutoff`; returns how many samples went. */
export async function deleteExpiredPoints(db: Db, agentIds: readonly string[], cutoff: Date): Promise<number> {
  const { rows } = await sql<{ deleted: number }>`
    with gone as (
      delete from metric_points where agent_id = any(${sql.val(agentIds)}::text[]) and time < ${cutoff}
      returning cardinality(vals) as n
    )
    select coalesce(sum(n), 0)::int8 as deleted from gone`.execute(db);
  return rows[0]?.deleted ?? 0;
}

/**
 * Deletes up to `limit` compacted hours that ended by `cutoff` (all their samples are older), through
 * the hour index; returns how many samples went (0: nothing left to delete).
 */
export async function deleteExpiredHours(db: Db, cutoff: Date, limit: number): Promise<number> {
  const { rows } = await sql<{ deleted: number }>`
    with gone as (
      delete from metric_hours
      where ctid = any(array(
        select ctid from metric_hours where hour <= ${cutoff}::timestamptz - interval '1 hour' limit ${limit}
      ))
      returning sample_count
    )
    select coalesce(sum(sample_count), 0)::int8 as deleted from gone`.execute(db);
  return rows[0]?.deleted ?? 0;
}

/** Agent ids in pages (ordered by id), so maintenance walks every agent in bounded batches. */
export async function agentIdsAfter(db: Db, after: string | null, limit: number): Promise<string[]> {
  let query = db.selectFrom('agents').select('id').orderBy('id').limit(limit);
  if (after !== null) query = query.where('id', '>', after);
  return (await query.execute()).map((r) => r.id);
}
