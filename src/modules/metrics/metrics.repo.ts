// Metric queries (contract §4) over both storage forms (sample-sources.ts).
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { afterCondition, keyColumn, keyOrder, keyset, pageKeySelection, type Keyset } from '../../db/keyset.js';
import type { Database } from '../../db/schema.js';
import type { Page, PageKey, PageRequest } from '../../platform/paging.js';
import { allSamples, compactedHours, compactedSamples, recentSamples, type SampleFilter } from './sample-sources.js';

type Db = Kysely<Database>;

export interface SampleRow {
  time: Date;
  metric: string;
  label: string;
  value: number;
}

export interface SummaryRow {
  bucket: Date;
  metric: string;
  label: string;
  avg: number;
  min: number;
  max: number;
  count: number;
}

export interface RateRow {
  time: Date;
  interface: string;
  rx_bps: number;
  tx_bps: number;
}

/** Newest first while choosing a page; (time, metric, label) is unique per agent's sample. */
const NEWEST_SAMPLE_FIRST = keyset([keyColumn('time', 'timestamptz'), keyColumn('metric', 'text'), keyColumn('label', 'text')], true);
const NEWEST_RATE_FIRST = keyset([keyColumn('time', 'timestamptz'), keyColumn('interface', 'text')], true);

/**
 * The most recent `limit` rows of `source` before the position (older than it), in ascending order;
 * `next` is the position of the oldest returned row when older ones remain.
 */
async function newestBefore<T>(db: Db, source: RawBuilder<unknown>, ks: Keyset, page: PageRequest): Promise<Page<T>> {
  const { rows } = await sql<T & { page_key: PageKey }>`
    select * from (
      select *, ${pageKeySelection(ks)} from (${source}) as s
      where ${afterCondition(ks, page)}
      order by ${keyOrder(ks)}
      limit ${page.limit + 1}
    ) as newest
    order by ${keyOrder({ ...ks, descending: false })}`.execute(db);
  const more = rows.length > page.limit;
  const kept = more ? rows.slice(1) : rows;
  return { items: kept.map(({ page_key: _key, ...row }) => row as T), next: more ? kept[0]!.page_key : null };
}

/** The most recent `limit` samples (before the position), returned in ascending time order. */
export function rawSamples(db: Db, f: SampleFilter, page: PageRequest): Promise<Page<SampleRow>> {
  return newestBefore<SampleRow>(db, sql`select time, metric, label, value from (${allSamples(f)}) as a`, NEWEST_SAMPLE_FIRST, page);
}

/**
 * Buckets start at multiples of the width counted from Monday 2000-01-03 00:00 UTC (as TimescaleDB's
 * time_bucket does), so hours and days start on the hour and at midnight UTC, and weeks on Mondays.
 */
const BUCKET_ORIGIN_EPOCH_S = Date.UTC(2000, 0, 3) / 1000;
// float8 arithmetic (date_part), not numeric (extract): several times faster per sample, and exact
// here, since epoch seconds with millisecond fractions sit far inside a double's precision.
const bucketOf = (time: RawBuilder<unknown>, widthS: number) =>
  sql`to_timestamp(floor((date_part('epoch', ${time}) - ${BUCKET_ORIGIN_EPOCH_S}::float8) / ${widthS}::float8) * ${widthS}::float8 + ${BUCKET_ORIGIN_EPOCH_S}::float8)`;

/**
 * Averages per bucket and label. A compacted hour that lies wholly inside the range and inside one
 * bucket contributes its stored count/sum/min/max (one row instead of its samples): that is what makes
 * a 90-day summary cheap. Every other sample is aggregated one by one.
 */
export async function summarize(db: Db, f: SampleFilter, widthS: number): Promise<SummaryRow[]> {
  const lastInstant = sql`h.hour + interval '1 hour' - interval '1 microsecond'`;
  const wholeHour = sql`h.hour >= ${f.from} and ${lastInstant} <= ${f.to}
    and ${bucketOf(sql`h.hour`, widthS)} = ${bucketOf(lastInstant, widthS)}`;
  const { rows } = await sql<SummaryRow>`
    with parts as (
      select ${bucketOf(sql`s.time`, widthS)} as bucket, s.metric, s.label,
             s.value as total, s.value as low, s.value as high, 1 as n
      from (${recentSamples(f)}) as s
      union all
      select ${bucketOf(sql`c.time`, widthS)}, c.metric, c.label, c.value, c.value, c.value, 1
      from (${compactedSamples(f, sql`not (${wholeHour})`)}) as c
      union all
      select ${bucketOf(sql`h.hour`, widthS)}, h.metric, h.label, h.value_sum, h.value_min, h.value_max, h.sample_count
      from (${compactedHours(f, wholeHour)}) as h
    )
    select bucket, metric, label, sum(total) / sum(n) as avg, min(low) as min, max(high) as max, sum(n)::int8 as count
    from parts
    group by bucket, metric, label
    order by bucket, metric, label`.execute(db);
  return rows;
}

/**
 * Receive/transmit rates in bits per second between consecutive samples of each interface's two
 * counters. A point needs both counters in both samples; a counter that went down (a reset: reboot,
 * driver reload, wrap) yields no point. With a bucket width, the steps ending in one bucket become one
 * point at the bucket's start: their bits over their seconds, so a long step weighs as much as the
 * time it covers (the mean over the bucket, not the mean of uneven samples). The most recent `limit`
 * points (before the position), ascending.
 */
export function interfaceRates(db: Db, f: SampleFilter, page: PageRequest, widthS: number | null = null): Promise<Page<RateRow>> {
  const counters: SampleFilter = { ...f, metrics: ['interface_rx_bytes', 'interface_tx_bytes'] };
  const points =
    widthS === null
      ? sql`select time, interface, rx_bits / seconds as rx_bps, tx_bits / seconds as tx_bps from moves`
      : sql`select ${bucketOf(sql.ref('time'), widthS)} as time, interface, sum(rx_bits) / sum(seconds) as rx_bps, sum(tx_bits) / sum(seconds) as tx_bps
            from moves
            group by 1, interface`;
  const source = sql`
    with readings as (
      select time, label,
             max(value) filter (where metric = 'interface_rx_bytes') as rx,
             max(value) filter (where metric = 'interface_tx_bytes') as tx
      from (${allSamples(counters)}) as s
      group by time, label
    ),
    steps as (
      select time, label, rx, tx,
             lag(time) over w as prev_time, lag(rx) over w as prev_rx, lag(tx) over w as prev_tx
      from readings
      window w as (partition by label order by time)
    ),
    moves as (
      select time, label as interface, (rx - prev_rx) * 8 as rx_bits, (tx - prev_tx) * 8 as tx_bits,
             extract(epoch from time - prev_time)::float8 as seconds
      from steps
      where time > prev_time and rx >= prev_rx and tx >= prev_tx
    )
    ${points}`;
  return newestBefore<RateRow>(db, source, NEWEST_RATE_FIRST, page);
}

/**
 * The newest value of every metric and label: from the agent's recent samples (the layouts used in
 * the 24 hours before its newest heartbeat with samples), or, for an agent whose samples are all
 * compacted, from its newest compacted hours.
 */
export async function latestSamples(db: Db, agentId: string): Promise<SampleRow[]> {
  const { rows } = await sql<SampleRow>`
    with newest as (select max(time) as t from metric_points where agent_id = ${agentId}),
    per_layout as (
      select distinct on (p.layout) p.layout, p.time, p.vals
      from metric_points as p, newest
      where p.agent_id = ${agentId} and p.time >= newest.t - interval '24 hours'
      order by p.layout, p.time desc
    )
    select distinct on (s.metric, s.label) p.time, s.metric, s.label, p.vals[s.i::int] as value
    from per_layout as p
    join metric_layouts as l on l.id = p.layout
    cross join lateral unnest(l.metrics, l.labels) with ordinality as s(metric, label, i)
    order by s.metric, s.label, p.time desc`.execute(db);
  if (rows.length > 0) return rows;
  const { rows: compacted } = await sql<SampleRow>`
    select distinct on (metric, label) hour + offsets_ms[cardinality(offsets_ms)] * interval '1 millisecond' as time,
           metric, label, vals[cardinality(vals)] as value
    from metric_hours
    where agent_id = ${agentId}
      and hour >= (select max(hour) from metric_hours where agent_id = ${agentId}) - interval '24 hours'
    order by metric, label, hour desc`.execute(db);
  return compacted;
}
