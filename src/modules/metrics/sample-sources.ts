// The two places samples live, as SQL row sources every metrics query builds on: recent samples in
// metric_points (one row per heartbeat, positions named by its layout) and compacted ones in
// metric_hours (one row per agent/metric/label/hour). Each yields (time, metric, label, value) for one
// agent, a time range (both ends inclusive) and optional metric and label filters, so a query reads raw
// and compacted data alike. Every value here is a bound parameter.
import { sql, type RawBuilder } from 'kysely';

export interface SampleFilter {
  agentId: string;
  /** null: every metric. */
  metrics: readonly string[] | null;
  /** null: every label. */
  label: string | null;
  from: Date;
  to: Date;
}

const metricIn = (column: RawBuilder<unknown>, metrics: readonly string[] | null) =>
  metrics === null ? sql`true` : sql`${column} = any(${sql.val(metrics)}::text[])`;
const labelIs = (column: RawBuilder<unknown>, label: string | null) => (label === null ? sql`true` : sql`${column} = ${label}`);

/**
 * Samples of metric_points. The wanted positions of the layouts the agent used in the range are worked
 * out once (materialized: left to itself the planner may unnest the layout again for every row).
 */
export function recentSamples(f: SampleFilter): RawBuilder<unknown> {
  const inRange = sql`p.agent_id = ${f.agentId} and p.time between ${f.from} and ${f.to}`;
  return sql`
    with positions as materialized (
      select l.id as layout, s.metric, s.label, s.i::int as i
      from metric_layouts as l
      cross join lateral unnest(l.metrics, l.labels) with ordinality as s(metric, label, i)
      where l.id in (select distinct p.layout from metric_points as p where ${inRange})
        and ${metricIn(sql.ref('s.metric'), f.metrics)} and ${labelIs(sql.ref('s.label'), f.label)}
    )
    select p.time, k.metric, k.label, p.vals[k.i] as value
    from metric_points as p
    join positions as k on k.layout = p.layout
    where ${inRange}`;
}

/** metric_hours rows overlapping the range (before unnesting), as `h`. */
export function compactedHours(f: SampleFilter, extra: RawBuilder<unknown> = sql`true`): RawBuilder<unknown> {
  return sql`
    select h.* from metric_hours as h
    where h.agent_id = ${f.agentId} and ${metricIn(sql.ref('h.metric'), f.metrics)} and ${labelIs(sql.ref('h.label'), f.label)}
      and h.hour > ${f.from}::timestamptz - interval '1 hour' and h.hour <= ${f.to} and ${extra}`;
}

/** Samples of metric_hours rows (all of them, or those `extra` selects), cut to the range. */
export function compactedSamples(f: SampleFilter, extra?: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`
    select c.time, h.metric, h.label, c.value
    from (${compactedHours(f, extra)}) as h
    cross join lateral (
      select h.hour + t.ms * interval '1 millisecond' as time, t.value
      from unnest(h.offsets_ms, h.vals) as t(ms, value)
    ) as c
    where c.time between ${f.from} and ${f.to}`;
}

/** Every sample matching the filter, from both forms. */
export function allSamples(f: SampleFilter): RawBuilder<unknown> {
  return sql`select * from (${recentSamples(f)}) as recent union all ${compactedSamples(f)}`;
}
