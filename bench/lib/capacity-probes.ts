// What capacity.ts reads from the database over a connection of its own: the size of the metric tables,
// the WAL position, and what one configuration backup takes once stored (on PostgreSQL beside the
// running server; on PGlite, which the server holds alone, the sizes come from its files instead,
// bench/lib/pglite-files.ts, and the backups are stored once it stopped).
import { sql } from 'kysely';
import type { DbHandle } from '../../src/db/create-db.js';

export interface Traffic {
  /** Bytes the server received and sent on the agents' connections (TCP payload: HTTP and WebSocket). */
  bytesIn: number;
  bytesOut: number;
}

export interface Storage {
  /** metric_points + metric_layouts + metric_hours, with their indexes and TOAST. */
  metricBytes: number;
  /** The whole database (pg_database_size). */
  databaseBytes: number;
  /** Metric samples stored so far. */
  samples: number;
  /** The WAL position (pg_current_wal_lsn) in bytes from 0/0: the cluster's, not this database's alone. */
  walBytes: number;
  /** Checkpoints the cluster has begun so far (NaN when neither view answers): the first change to a page after one logs the whole page. */
  checkpoints: number;
  /** Transactions committed so far in each of the cluster's other databases (by oid): anything else writing WAL meanwhile. */
  otherCommits: Array<[number, number]>;
}

const METRIC_TABLES = ['metric_points', 'metric_layouts', 'metric_hours'];

export async function readStorage(handle: DbHandle): Promise<Storage> {
  const db = handle.db;
  let metricBytes = 0;
  for (const table of METRIC_TABLES) {
    const { rows } = await sql<{ bytes: string }>`select pg_total_relation_size(${table}::regclass)::int8 as bytes`.execute(db);
    metricBytes += Number(rows[0]?.bytes ?? 0);
  }
  const { rows } = await sql<{ database: string; samples: string; wal: string }>`
    select pg_database_size(current_database())::int8 as database,
           (select coalesce(sum(cardinality(vals)), 0) from metric_points)::int8 as samples,
           pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::int8 as wal`.execute(db);
  const r = rows[0]!;
  // Per database: other sessions create and drop theirs, so one sum across them can go down.
  const { rows: others } = await sql<{ oid: number; commits: string }>`
    select datid as oid, xact_commit::int8 as commits from pg_stat_database
    where datname is not null and datname <> current_database()`.execute(db);
  return {
    metricBytes,
    checkpoints: await checkpoints(handle),
    databaseBytes: Number(r.database),
    samples: Number(r.samples),
    walBytes: Number(r.wal),
    otherCommits: others.map((o) => [Number(o.oid), Number(o.commits)]),
  };
}

/** PostgreSQL 15 counts checkpoints in pg_stat_bgwriter; 17 (PGlite's) in pg_stat_checkpointer. */
async function checkpoints(handle: DbHandle): Promise<number> {
  const read = async (query: ReturnType<typeof sql<{ n: string }>>) => Number((await query.execute(handle.db)).rows[0]?.n);
  return read(sql<{ n: string }>`select (checkpoints_timed + checkpoints_req)::int8 as n from pg_stat_bgwriter`).catch(() =>
    read(sql<{ n: string }>`select (num_timed + num_requested)::int8 as n from pg_stat_checkpointer`).catch(() => Number.NaN),
  );
}

/** Transactions the other databases committed between two reads (a database created in between counts from zero). */
export function commitsBetween(from: Storage, to: Storage): number {
  const before = new Map(from.otherCommits);
  return to.otherCommits.reduce((n, [oid, commits]) => n + Math.max(0, commits - (before.get(oid) ?? 0)), 0);
}

/**
 * The bytes one configuration backup of `content` takes in config_backups: stored `copies` times over
 * the fleet's firewalls (each copy a distinct content, as a changed configuration is), measured as the
 * table's growth (rows, compressed TOAST, both indexes) over the second half, after a vacuum, so the
 * table's first pages and its maps are not charged to the backups; then deleted again. Also the
 * content's compressed size alone (pg_column_size) and its raw UTF-8 bytes.
 */
export async function backupBytes(handle: DbHandle, content: string, copies = 200): Promise<{ perBackup: number; column: number; raw: number }> {
  const db = handle.db;
  const size = async () => {
    await sql`vacuum config_backups`.execute(db).catch(() => undefined);
    const { rows } = await sql<{ bytes: string }>`select pg_total_relation_size('config_backups')::int8 as bytes`.execute(db);
    return Number(rows[0]?.bytes ?? 0);
  };
  const { rows: agents } = await sql<{ id: string }>`select id from agents where platform = 'freebsd' order by id`.execute(db);
  if (agents.length === 0) throw new Error('no firewall agent to store a backup for');
  const raw = Buffer.byteLength(content, 'utf8');
  const store = async (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const text = `<!-- ${i} -->\n${content}`;
      await sql`insert into config_backups (agent_id, hash, size, content, created_at)
                values (${agents[i % agents.length]!.id}, ${`capacity-bench-${i}`}, ${raw}, ${text}, now())`.execute(db);
    }
  };
  const half = Math.floor(copies / 2);
  await store(0, half);
  const before = await size();
  await store(half, copies);
  const after = await size();
  const { rows } = await sql<{ bytes: string }>`select avg(pg_column_size(content))::int8 as bytes from config_backups where hash like 'capacity-bench-%'`.execute(db);
  await sql`delete from config_backups where hash like 'capacity-bench-%'`.execute(db);
  return { perBackup: (after - before) / (copies - half), column: Number(rows[0]?.bytes ?? 0), raw };
}
