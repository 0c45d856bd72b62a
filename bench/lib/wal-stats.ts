// What PostgreSQL wrote for one window of the WAL bench (bench/wal.ts): WAL bytes and full-page images
// (pg_stat_wal, cluster-wide, and the LSN difference), the tables' updates and HOT updates
// (pg_stat_user_tables), their sizes (heap, TOAST, indexes), and, with pg_walinspect, what the WAL is
// made of: per resource manager and record type, and per relation of the bench's own database.
import type pg from 'pg';

export interface WalPoint {
  lsn: string;
  walBytes: number;
  walRecords: number;
  walFpi: number;
  tables: Map<string, { upd: number; hotUpd: number; ins: number; heapBytes: number; toastBytes: number; indexBytes: number }>;
}

export async function walPoint(c: pg.Client): Promise<WalPoint> {
  const lsn = (await c.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]!.lsn;
  const wal = (await c.query<{ b: string; r: string; f: string }>('select wal_bytes::text as b, wal_records::text as r, wal_fpi::text as f from pg_stat_wal')).rows[0]!;
  const { rows } = await c.query<{ name: string; upd: string; hot: string; ins: string; heap: string; toast: string; idx: string }>(
    `select s.relname as name, s.n_tup_upd::text as upd, s.n_tup_hot_upd::text as hot, s.n_tup_ins::text as ins,
            pg_relation_size(s.relid)::text as heap,
            coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0)::text as toast,
            pg_indexes_size(s.relid)::text as idx
       from pg_stat_user_tables s join pg_class c on c.oid = s.relid`,
  );
  const tables = new Map(rows.map((r) => [r.name, { upd: Number(r.upd), hotUpd: Number(r.hot), ins: Number(r.ins), heapBytes: Number(r.heap), toastBytes: Number(r.toast), indexBytes: Number(r.idx) }]));
  return { lsn, walBytes: Number(wal.b), walRecords: Number(wal.r), walFpi: Number(wal.f), tables };
}

export interface WalPart {
  name: string;
  bytes: number;
  fpiBytes: number;
  records: number;
}

/** Whether pg_walinspect can be used (PostgreSQL 15 and later, contrib installed, a superuser). */
export async function enableWalInspect(c: pg.Client): Promise<string | undefined> {
  try {
    await c.query('create extension if not exists pg_walinspect');
    return undefined;
  } catch (err) {
    return `pg_walinspect unavailable (${err instanceof Error ? err.message : String(err)})`;
  }
}

/** The window's WAL by resource manager and record type (pg_get_wal_stats per record). */
export async function walByRecordType(c: pg.Client, from: string, to: string): Promise<WalPart[]> {
  const { rows } = await c.query<{ name: string; bytes: string; fpi: string; n: string }>(
    `select "resource_manager/record_type" as name, combined_size::text as bytes, fpi_size::text as fpi, count::text as n
       from pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, true) where count > 0 order by combined_size desc`,
    [from, to],
  );
  return rows.map((r) => ({ name: r.name, bytes: Number(r.bytes), fpiBytes: Number(r.fpi), records: Number(r.n) }));
}

/**
 * The window's WAL by the relation of each record's first block, this database's relations by name
 * (TOAST tables as `<table> (toast)`, indexes by their own name), other databases' as `(other database)`.
 * A record without a block (a commit) is this database's, `(no block)`, when its transaction wrote a
 * block of this database in the window; the others (other databases' commits, checkpoints, the running
 * transactions' snapshots) go with `(other database)`: on a shared server, counting every commit made
 * the figure depend on what else ran (1,680 KiB of them in one 120 s window where the bench's own 3,602
 * commits are about 160 KiB).
 */
export async function walByRelation(c: pg.Client, from: string, to: string): Promise<WalPart[]> {
  const { rows } = await c.query<{ name: string; bytes: string; fpi: string; n: string }>(
    `with r as (
       select xid::text::bigint as x, record_length, fpi_length, substring(block_ref from 'rel \\d+/(\\d+)/\\d+')::oid as db,
              substring(block_ref from 'rel \\d+/\\d+/(\\d+)')::oid as node
         from pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
     ), ours as (
       select distinct x from r where x <> 0 and db = (select oid from pg_database where datname = current_database())
     ), named as (
       select record_length, fpi_length,
              case when node is null then (case when x in (select x from ours) then '(no block)' else '(other database)' end)
                   when db <> (select oid from pg_database where datname = current_database()) then '(other database)'
                   else coalesce((select coalesce(t.relname || ' (toast)', k.relname) from pg_class k left join pg_class t on t.reltoastrelid = k.oid
                                   where k.oid = pg_filenode_relation(0, node)), 'relfilenode ' || node) end as name
         from r
     )
     select name, sum(record_length)::text as bytes, sum(fpi_length)::text as fpi, count(*)::text as n from named group by name order by sum(record_length) desc`,
    [from, to],
  );
  return rows.map((r) => ({ name: r.name, bytes: Number(r.bytes), fpiBytes: Number(r.fpi), records: Number(r.n) }));
}

/** "agents 41 % (FPI 3 %), metric_points 20 %, …": the largest parts, each as a share of the whole. */
export function describeParts(parts: readonly WalPart[], total: number, top = 8): string {
  const pct = (n: number) => `${((n / total) * 100).toFixed(1)} %`;
  return parts
    .slice(0, top)
    .map((p) => `${p.name} ${pct(p.bytes)} (${(p.bytes / 1024).toFixed(0)} KiB, ${p.records} rec${p.fpiBytes > 0 ? `, FPI ${(p.fpiBytes / 1024).toFixed(0)} KiB` : ''})`)
    .join('; ');
}
