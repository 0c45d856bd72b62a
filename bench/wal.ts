// Write amplification of heartbeats on PostgreSQL (issue 62, point 2): WAL bytes per stored heartbeat,
// with the fleet simulator's realistic bodies (src/fleet: uptime, counters and load change every beat).
// The real server runs in a process of its own at the production log level on a throw-away database;
// the fleet (BENCH_WAL_AGENTS agents, one heartbeat each every BENCH_WAL_INTERVAL_S) in another. After
// every agent connected, a checkpoint and BENCH_WAL_WARMUP_S of steady heartbeats, the bench measures
// over BENCH_WAL_MEASURE_S: WAL bytes of the bench's database (pg_walinspect's records; without it
// pg_stat_wal, the cluster's) ÷ heartbeats the server answered, full-page images, the agents table's
// updates and the share of them that were HOT, the tables' growth (heap, TOAST, indexes), and, with
// pg_walinspect, what the WAL is made of, by record type and by relation. pg_stat_wal and the LSN are
// the whole cluster's (other work on the server shows there, not in the figure; a record without a
// block, a commit, counts when its transaction wrote a block of the bench's database).
//
// The baseline is not measured in the same run: the change it compares with is a schema and write-path
// change, not a setting. It is this bench's figure on main at cb31041 (the commit before issue 62's
// point 2), run on this machine on 2026-11-30 with the same settings (BENCH_WAL_BASELINE_BYTES overrides
// it for another machine: run this file on a checkout of cb31041 there). Target: ≤ 50 % of it.
//
// Environment: BENCH_WAL_AGENTS (300), BENCH_WAL_INTERVAL_S (10), BENCH_WAL_WARMUP_S (90),
// BENCH_WAL_MEASURE_S (120), BENCH_WAL_BASELINE_BYTES, BENCH_DATABASE_URL.
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { SERVER_NODE_ENV, SERVER_NODE_FLAGS } from '../src/platform/node-flags.js';
import { withDatabase } from '../test/helpers/postgres-admin.js';
import { positiveNumber } from './lib/backends.js';
import { forkRpc } from './lib/child-rpc.js';
import { postgresAdminUrl } from './lib/databases.js';
import type { FleetStart } from './lib/fleet-child.js';
import { reasonsOf, waitUntilConnected, type FleetChildStats } from './lib/fleet-measure.js';
import type { LoopDelay, StartedServer } from './lib/fleet-server-child.js';
import { runWhenMain, type BenchRow, type Target } from './lib/table.js';
import { describeParts, enableWalInspect, walByRecordType, walByRelation, walPoint, type WalPart, type WalPoint } from './lib/wal-stats.js';

export const name = 'wal';
const log = (message: string) => process.stderr.write(`[${name}] ${message}\n`);
const SERVER_FILE = fileURLToPath(new URL('./lib/fleet-server-child.ts', import.meta.url));
const FLEET_FILE = fileURLToPath(new URL('./lib/fleet-child.ts', import.meta.url));
const TARGET: Target = { op: '≤', value: 0.5 };
/**
 * WAL bytes per heartbeat on main at cb31041, this bench with its defaults, this machine, 2026-11-30
 * 02:46–02:50 (bench/history/2026-11-30.md). An earlier scratch measurement without the checkpoint at the
 * warm-up's start gave 7,314 (334 full-page images in its window against 16 here).
 */
const BASELINE_BYTES = 6887;
const BASELINE_LABEL = 'cb31041, earlier run';

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const agents = positiveNumber(env, 'BENCH_WAL_AGENTS', 300);
  const intervalMs = positiveNumber(env, 'BENCH_WAL_INTERVAL_S', 10) * 1000;
  const warmupMs = positiveNumber(env, 'BENCH_WAL_WARMUP_S', 90) * 1000;
  const measureMs = positiveNumber(env, 'BENCH_WAL_MEASURE_S', 120) * 1000;
  const baseline = positiveNumber(env, 'BENCH_WAL_BASELINE_BYTES', BASELINE_BYTES);
  const setting = `${agents} agents, 1 heartbeat/${intervalMs / 1000} s, ${measureMs / 1000} s`;
  const base = { benchmark: name, backend: 'postgres', setting, baseline, baselineLabel: BASELINE_LABEL, better: 'lower' as const };
  const admin = await postgresAdminUrl(env);
  if (!admin.url) return [{ ...base, figure: Number.NaN, unit: 'WAL bytes/heartbeat', target: TARGET, note: `skipped: the WAL bench needs PostgreSQL (${admin.reason})` }];

  const server = forkRpc(SERVER_FILE, [...SERVER_NODE_FLAGS], SERVER_NODE_ENV);
  const fleet = forkRpc(FLEET_FILE);
  let client: pg.Client | undefined;
  try {
    const started = await server.call<StartedServer>('start', { kind: 'rmm', backend: 'postgres', logLevel: 'info' });
    // The server's child made its database as rmm_bench_<its pid>_<random>.
    const dbName = await serverDatabase(admin.url, server.pid);
    if (!dbName) throw new Error(`the server's database (rmm_bench_${server.pid}_…) was not found`);
    client = new pg.Client({ connectionString: withDatabase(admin.url, dbName) });
    await client.connect();
    const inspect = await enableWalInspect(client);
    log(`server at ${started.url} on ${dbName}; ${agents} agents every ${intervalMs / 1000} s`);

    await fleet.call('start', { serverUrl: started.url, apiKey: started.apiKey, agents, intervalMs } satisfies FleetStart);
    await waitUntilConnected(fleet, { agents, intervalMs, warmupMs, measureMs, serverFlags: [] }, log);
    // A checkpoint starts the warm-up, so every run's window sits at the same distance from the last one
    // (full-page images follow checkpoints); the server's own run every checkpoint_timeout (5 min default).
    await client.query('checkpoint');
    await delay(warmupMs);
    const statsFrom = await fleet.call<FleetChildStats>('stats');
    await server.call('delays');
    // A temporary replication slot keeps the window's WAL on disk until pg_walinspect has read it (a busy
    // server recycled the segments under a run once); dropped with the connection.
    if (!inspect) await client.query(`select pg_create_physical_replication_slot('rmm_bench_wal_${process.pid}', true, true)`).catch((err: Error) => log(`no replication slot: ${err.message}`));
    const from = await walPoint(client);
    await delay(measureMs);
    const to = await walPoint(client);
    const answered = (await server.call<LoopDelay>('delays')).heartbeats;
    const statsTo = await fleet.call<FleetChildStats>('stats');
    const failed = statsTo.heartbeatsFailed - statsFrom.heartbeatsFailed;
    let unread = inspect;
    let byType: WalPart[] = [];
    let byRelation: WalPart[] = [];
    if (!unread) {
      try {
        byType = await walByRecordType(client, from.lsn, to.lsn);
        byRelation = await walByRelation(client, from.lsn, to.lsn);
      } catch (err) {
        unread = `pg_walinspect could not read the window: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    return rows(base, { from, to, answered, failed, byType, byRelation, inspect: unread, failure: failed > 0 ? `first failure${reasonsOf(statsTo)}` : undefined });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    log(`failed: ${message}`);
    return [{ ...base, figure: Number.NaN, unit: 'WAL bytes/heartbeat', target: TARGET, note: `failed: ${message}` }];
  } finally {
    await client?.end().catch(() => undefined);
    await fleet.close(60_000);
    await server.close();
  }
}

async function serverDatabase(adminUrl: string, pid: number | undefined): Promise<string | undefined> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    const { rows } = await c.query<{ datname: string }>(`select datname from pg_database where datname like $1`, [`rmm_bench_${pid}_%`]);
    return rows[0]?.datname;
  } finally {
    await c.end();
  }
}

interface Window {
  from: WalPoint;
  to: WalPoint;
  answered: number;
  failed: number;
  byType: WalPart[];
  byRelation: WalPart[];
  inspect?: string;
  failure?: string;
}

type Base = Omit<BenchRow, 'figure' | 'unit'>;

function rows(base: Base, w: Window): BenchRow[] {
  const walBytes = w.to.walBytes - w.from.walBytes;
  const fpi = w.to.walFpi - w.from.walFpi;
  const records = w.to.walRecords - w.from.walRecords;
  // With pg_walinspect the figure is this database's WAL (records of its relations, plus the commits of
  // the transactions that wrote them): other work on the same server does not count. Without it,
  // the cluster's (pg_stat_wal), and the note says so.
  const others = w.byRelation.find((p) => p.name === '(other database)')?.bytes ?? 0;
  const ownBytes = w.inspect ? walBytes : w.byRelation.reduce((sum, p) => sum + p.bytes, 0) - others;
  const perBeat = ownBytes / w.answered;
  // Full-page images come after every checkpoint, and on a shared server other databases' WAL brings
  // checkpoints on (max_wal_size): the figure without them compares windows that differ only in that.
  const ownFpiBytes = w.inspect ? Number.NaN : w.byRelation.reduce((sum, p) => sum + (p.name === '(other database)' ? 0 : p.fpiBytes), 0);
  const agents = tableDelta(w, 'agents');
  const hot = agents.upd > 0 ? (agents.hotUpd / agents.upd) * 100 : Number.NaN;
  const growth = [...w.to.tables.keys()]
    .map((t) => ({ t, d: tableDelta(w, t) }))
    .map(({ t, d }) => ({ t, bytes: d.heapBytes + d.toastBytes + d.indexBytes, d }))
    .filter((g) => g.bytes !== 0)
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 6)
    .map(({ t, d }) => `${t} +${kib(d.heapBytes)} heap, +${kib(d.toastBytes)} TOAST, +${kib(d.indexBytes)} indexes`)
    .join('; ');
  const size = w.to.tables.get('agents');
  const breakdown = w.inspect
    ? `no breakdown: ${w.inspect}`
    : `by relation: ${describeParts(w.byRelation, walBytes)}. By record type: ${describeParts(w.byType, walBytes)}`;
  log(`${w.answered} heartbeats, ${ownBytes} WAL bytes of this database (${perBeat.toFixed(0)} a heartbeat; the cluster's ${walBytes}), ${fpi} FPIs; ${breakdown}`);
  const errors = { errors: w.failed };
  return [
    {
      ...base,
      ...errors,
      figure: perBeat,
      unit: 'WAL bytes/heartbeat',
      target: TARGET,
      note:
        `${w.answered} heartbeats answered; ${w.inspect ? 'the whole cluster\'s WAL (no pg_walinspect): ' : `this database's WAL ${mib(ownBytes)} (pg_walinspect; ${mib(others)} of other databases left out); the cluster's `}` +
        `${mib(walBytes)} (pg_stat_wal; LSN difference ${mib(lsnBytes(w.to.lsn) - lsnBytes(w.from.lsn))}), ${records} records, ` +
        `${fpi} full-page images; agents: ${agents.upd} updates, ${hot.toFixed(1)} % HOT, heap ${mib(size?.heapBytes ?? 0)} + TOAST ${mib(size?.toastBytes ?? 0)} + indexes ${mib(size?.indexBytes ?? 0)} ` +
        `at the end. Growth in the window: ${growth || 'none'}. ${breakdown}${w.failure ? `. ${w.failure}` : ''}`,
    },
    {
      ...base,
      ...errors,
      figure: (ownBytes - ownFpiBytes) / w.answered,
      unit: 'WAL bytes/heartbeat, no full-page images',
      target: TARGET,
      note: `this database's WAL less its full-page images (${kib(ownFpiBytes)}, ${((ownFpiBytes / ownBytes) * 100).toFixed(1)} %); the baseline's window had 16 full-page images in all`,
    },
    { ...base, ...errors, figure: fpi / w.answered, unit: 'full-page images/heartbeat', baseline: Number.NaN, baselineLabel: '–', note: 'the cluster\'s, after a checkpoint at the warm-up\'s start (other databases\' WAL can bring more checkpoints)' },
    { ...base, ...errors, figure: hot, unit: '% agents updates HOT', baseline: Number.NaN, baselineLabel: '–', better: 'higher' },
  ];
}

function tableDelta(w: Window, table: string) {
  const a = w.from.tables.get(table);
  const b = w.to.tables.get(table);
  if (!a || !b) return { upd: 0, hotUpd: 0, ins: 0, heapBytes: 0, toastBytes: 0, indexBytes: 0 };
  return { upd: b.upd - a.upd, hotUpd: b.hotUpd - a.hotUpd, ins: b.ins - a.ins, heapBytes: b.heapBytes - a.heapBytes, toastBytes: b.toastBytes - a.toastBytes, indexBytes: b.indexBytes - a.indexBytes };
}

const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

/** An LSN ("16/B374D848") as a byte position. */
function lsnBytes(lsn: string): number {
  const [hi, lo] = lsn.split('/');
  return parseInt(hi!, 16) * 2 ** 32 + parseInt(lo!, 16);
}

runWhenMain(import.meta.url, () => run());
