// Cluster capacity (issue 62, point 4): three instances of the built server (dist/src/main.js with its
// production flags, as users run it) on one PostgreSQL database, a nats-server of the bench's own (its
// /varz counts the messages), HAProxy in front with the documented deploy/haproxy/haproxy.cfg, and the
// fleet simulator (src/fleet, realistic bodies, one WebSocket per agent) connecting through HAProxy, so
// the agents spread over the instances as in a deployment.
//
// The fleet is stepped up (BENCH_CLUSTER_AGENTS: sockets, or sockets@interval in seconds). This machine
// cannot hold many more than 9,000 sockets through HAProxy (20,000 file descriptors a process, two per
// proxied connection), so past that a shorter interval stands in for more agents: N sockets at I s send
// the heartbeats of N × 60 / I agents at one a minute (each row says so). After each step has connected
// and settled, one window measures: heartbeats accepted, answer times as the fleet sees them, failures,
// the CPU of every process from /proc (each instance, PostgreSQL's backends of the database, HAProxy,
// nats-server, the fleet), the instances' RSS, the WAL (only from windows no other database wrote in:
// the shared server has other writers) and NATS messages. Stepping stops where it gives out: answers'
// p99 over BENCH_CLUSTER_P99_MS, failures or lost sockets, or the cluster's processes using 90 % of the
// machine's cores. Then the per-heartbeat and per-socket costs (least squares through the steps), each step's CPU as they
// predict it against what was measured, and the model for 100,000 agents at one heartbeat a minute.
//
// Environment: BENCH_CLUSTER_AGENTS (2000,5000,9000,9000@30,9000@20,9000@15), BENCH_CLUSTER_SETTLE_S (15),
// BENCH_CLUSTER_MEASURE_S (45), BENCH_CLUSTER_P99_MS (1000), BENCH_CLUSTER_PER_FLEET (4500 agents a fleet
// process), BENCH_CLUSTER_HEADROOM (0.5 of a core), BENCH_DATABASE_URL. Measured, never asserted.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { openPostgres } from '../src/db/create-db.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { createLogger } from '../src/platform/logger.js';
import { createDatabase, dropDatabase, withDatabase } from '../test/helpers/postgres-admin.js';
import { positiveNumber } from './lib/backends.js';
import { buildIfStale, residentMiB, startBuiltServer, type BuiltServer } from './lib/built-server.js';
import { clusterFleets } from './lib/cluster-fleets.js';
import { clusterMarkdown, clusterRows, givenOut, type ClusterSettings } from './lib/cluster-report.js';
import { makeKeys, startNatsServer } from './lib/cluster-processes.js';
import { measureClusterWindow, type ClusterWindow } from './lib/cluster-window.js';
import { postgresAdminUrl } from './lib/databases.js';
import { startHaproxy } from './lib/haproxy-process.js';
import { runWhenMain, type BenchRow } from './lib/table.js';

export const name = 'cluster-capacity';
const log = (message: string) => process.stderr.write(`[${name}] ${new Date().toISOString().slice(11, 19)} ${message}\n`);
const PASSWORD = 'bench-cluster-capacity-password';
const INSTANCES = ['rmm-a', 'rmm-b', 'rmm-c'];

export function settingsFrom(env: NodeJS.ProcessEnv): ClusterSettings {
  const steps = (env.BENCH_CLUSTER_AGENTS ?? '2000,5000,9000,9000@30,9000@20,9000@15').split(',').map((s) => {
    const [sockets, interval] = s.trim().split('@');
    return { sockets: Math.round(Number(sockets)), intervalS: interval === undefined ? 60 : Number(interval) };
  });
  if (!steps.every((s) => s.sockets > 0 && s.intervalS > 0)) throw new Error(`BENCH_CLUSTER_AGENTS: sockets or sockets@seconds, got ${env.BENCH_CLUSTER_AGENTS}`);
  return {
    steps,
    settleS: positiveNumber(env, 'BENCH_CLUSTER_SETTLE_S', 15),
    measureS: positiveNumber(env, 'BENCH_CLUSTER_MEASURE_S', 45),
    p99LimitMs: positiveNumber(env, 'BENCH_CLUSTER_P99_MS', 1000),
    perFleet: Math.round(positiveNumber(env, 'BENCH_CLUSTER_PER_FLEET', 4500)),
    headroom: positiveNumber(env, 'BENCH_CLUSTER_HEADROOM', 0.5),
    cores: os.cpus().length,
  };
}

/** The three instances, each on a data directory of its own, started one after another (each stop registered at once). */
async function startInstances(shared: Record<string, string>, dirs: string[], stops: Array<() => Promise<void>>): Promise<BuiltServer[]> {
  const started: BuiltServer[] = [];
  for (const [i, instance] of INSTANCES.entries()) {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), `rmm-bench-${instance}-`));
    dirs.push(dataDir);
    const server = await startBuiltServer({ ...shared, INSTANCE_ID: instance, DATA_DIR: dataDir, ...(i === 0 ? { ADMIN_PASSWORD: PASSWORD } : {}) });
    stops.push(() => server.stop());
    started.push(server);
  }
  return started;
}

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const s = settingsFrom(env);
  const admin = await postgresAdminUrl(env);
  const base = { benchmark: name, backend: 'postgres' };
  if (!admin.url) return [{ ...base, setting: '–', figure: Number.NaN, unit: '–', baseline: Number.NaN, baselineLabel: '–', better: 'lower', note: `skipped: the cluster needs PostgreSQL (${admin.reason})` }];
  buildIfStale();
  const dbName = await createDatabase({ adminUrl: admin.url, prefix: `rmm_bench_cluster_capacity_${process.pid}` });
  const url = withDatabase(admin.url, dbName);
  const db = openPostgres(url, createLogger({ level: 'silent' }));
  const stops: Array<() => Promise<void>> = [];
  const dirs: string[] = [];
  try {
    await migrateToLatest(db);
    const nats = await startNatsServer({ monitor: true });
    stops.push(() => nats.stop());
    const shared = { DATABASE_URL: url, NATS_URL: nats.url, ADVERTISE_ADDRESS: '127.0.0.1', TRUST_PROXY: '1', JWT_SECRET: randomBytes(24).toString('hex'), ENCRYPTION_KEY: randomBytes(24).toString('hex') };
    const instances = await startInstances(shared, dirs, stops);
    const haproxy = await startHaproxy(instances.map((i, n) => ({ name: INSTANCES[n]!, port: Number(new URL(i.url).port) })));
    stops.push(() => haproxy.stop());
    const keys = await makeKeys(`${haproxy.url}/api/v1`, PASSWORD);
    log(`${INSTANCES.length} instances behind HAProxy at ${haproxy.url}, NATS at ${nats.url}, database ${dbName}`);
    await delay(5000);
    const idleRss = await Promise.all(instances.map((i) => residentMiB(i.child.pid!)));
    const fleets = await clusterFleets(haproxy.url, keys.agent, s.perFleet);
    stops.push(() => fleets.close());
    const rig = { instances: instances.map((i, n) => ({ name: INSTANCES[n]!, pid: i.child.pid! })), haproxy, nats, db };
    const windows: ClusterWindow[] = [];
    let stoppedBy: string | undefined;
    for (const step of s.steps) {
      log(`step: ${step.sockets} sockets at ${step.intervalS} s`);
      try {
        await fleets.step(step.sockets, step.intervalS, log);
      } catch (err) {
        stoppedBy = `${step.sockets} sockets at ${step.intervalS} s did not connect: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
        break;
      }
      await delay(s.settleS * 1000);
      const w = await measureClusterWindow({ ...rig, fleets: fleets.children }, step, s.measureS);
      windows.push(w);
      log(describe(w));
      stoppedBy = givenOut(w, s);
      if (stoppedBy) break;
    }
    await fleets.close();
    const rows = clusterRows(windows, s, stoppedBy);
    process.stdout.write(`\n${clusterMarkdown(windows, idleRss.map((r) => r.rss), s, stoppedBy)}\n`);
    return rows;
  } finally {
    for (const stop of stops.reverse()) await stop().catch((err: unknown) => log(`stopping: ${String(err)}`));
    await db.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    await dropDatabase(admin.url, dbName);
  }
}

function describe(w: ClusterWindow): string {
  const cores = (ms: number) => (ms / w.seconds / 1000).toFixed(2);
  return (
    `${w.sockets} sockets at ${w.intervalS} s: ${(w.heartbeats / w.seconds).toFixed(1)} heartbeats/s, p50 ${w.p50Ms.toFixed(1)} p99 ${w.p99Ms.toFixed(1)} ms, ${w.failed} failed, ` +
    `${w.connected} connected (${Object.entries(w.socketsPerInstance).map(([k, v]) => `${k} ${v}`).join(', ')}); cores: instances ${cores(w.cpuMs.instances)}, ` +
    `PostgreSQL ${cores(w.cpuMs.postgres)}, HAProxy ${cores(w.cpuMs.haproxy)}, NATS ${cores(w.cpuMs.nats)}, fleet ${cores(w.cpuMs.fleet)}, machine ${w.machineBusyCores.toFixed(2)}; ` +
    `RSS ${w.rssMiBPerInstance.map((r) => r.toFixed(0)).join('/')} MiB; WAL ${(w.walAllBytes / 2 ** 20).toFixed(1)} MiB (${w.otherCommits} other commits); ` +
    `NATS ${(w.natsMsgs / w.seconds).toFixed(1)} msgs/s; load ${w.loadAverage.toFixed(1)}`
  );
}

runWhenMain(import.meta.url, () => run());
