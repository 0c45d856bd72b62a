// One steady window of cluster-capacity.ts: what each process of the cluster (three instances,
// PostgreSQL's backends of the bench's database, HAProxy, nats-server, the fleet) spent while the
// connected fleet sent its heartbeats, read from /proc, the fleet's own counters and NATS's /varz.
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import type { DbHandle } from '../../src/db/create-db.js';
import { percentiles } from './backends.js';
import { residentMiB } from './built-server.js';
import { commitsBetween, readStorage } from './capacity-probes.js';
import type { RpcChild } from './child-rpc.js';
import type { ClusterPoint } from './cluster-model.js';
import { pidCpuMs } from './cluster-processes.js';
import type { FleetChildStats } from './fleet-measure.js';
import type { Haproxy } from './haproxy-process.js';
import { watchBackendCpu } from './pg-backend-cpu.js';

export interface ClusterRig {
  instances: ReadonlyArray<{ name: string; pid: number }>;
  haproxy: Haproxy;
  nats: { pid: number; monitorUrl?: string };
  /** The bench's own handle on the cluster's database: its backends and the WAL position are read through it. */
  db: DbHandle;
  fleets: readonly RpcChild[];
}

export interface ClusterWindow extends ClusterPoint {
  p50Ms: number;
  p99Ms: number;
  failed: number;
  connected: number;
  /** Agent sockets per instance (HAProxy's open connections to each), at the window's end. */
  socketsPerInstance: Record<string, number>;
  rssMiBPerInstance: number[];
  /** WAL of the cluster in the window, whoever wrote it; and transactions other databases committed meanwhile. */
  walAllBytes: number;
  otherCommits: number;
  /** The whole machine's busy cores in the window (/proc/stat: everyone's work, the other engineer's too). */
  machineBusyCores: number;
  loadAverage: number;
  fleetLoopMaxMs: number;
}

/** Busy and total jiffies of the machine so far (the first line of /proc/stat). */
async function machineTicks(): Promise<{ busy: number; total: number }> {
  const [, ...fields] = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/);
  const n = fields.map(Number);
  const total = n.slice(0, 8).reduce((a, b) => a + b, 0);
  // idle and iowait are the 4th and 5th fields.
  return { busy: total - n[3]! - n[4]!, total };
}

async function natsMessages(monitorUrl: string | undefined): Promise<number> {
  if (!monitorUrl) return Number.NaN;
  const varz = (await (await fetch(`${monitorUrl}/varz`)).json()) as { in_msgs: number; out_msgs: number };
  return varz.in_msgs + varz.out_msgs;
}

async function cpuOf(rig: ClusterRig): Promise<{ instances: number; haproxy: number; nats: number; fleet: number }> {
  let instances = 0;
  for (const i of rig.instances) instances += await pidCpuMs(i.pid);
  const fleetStats = await Promise.all(rig.fleets.map((f) => f.call<FleetChildStats>('stats')));
  return { instances, haproxy: await pidCpuMs(rig.haproxy.pid), nats: await pidCpuMs(rig.nats.pid), fleet: fleetStats.reduce((t, s) => t + s.cpuMs, 0) };
}

const fleetTotals = async (fleets: readonly RpcChild[]) => {
  const all = await Promise.all(fleets.map((f) => f.call<FleetChildStats>('stats')));
  return { ok: all.reduce((n, s) => n + s.heartbeatsOk, 0), failed: all.reduce((n, s) => n + s.heartbeatsFailed, 0), connected: all.reduce((n, s) => n + s.connected, 0) };
};

export async function measureClusterWindow(rig: ClusterRig, step: { sockets: number; intervalS: number }, seconds: number): Promise<ClusterWindow> {
  for (const fleet of rig.fleets) await fleet.call('latencies');
  const statsFrom = await fleetTotals(rig.fleets);
  const storageFrom = await readStorage(rig.db);
  const natsFrom = await natsMessages(rig.nats.monitorUrl);
  const database = watchBackendCpu(rig.db.db, 2000);
  const machineFrom = await machineTicks();
  const cpuFrom = await cpuOf(rig);
  const started = performance.now();
  await delay(seconds * 1000);
  const cpuTo = await cpuOf(rig);
  const elapsedS = (performance.now() - started) / 1000;
  const machineTo = await machineTicks();
  const postgres = (await database.stop()) ?? Number.NaN;
  const natsTo = await natsMessages(rig.nats.monitorUrl);
  const storageTo = await readStorage(rig.db);
  const statsTo = await fleetTotals(rig.fleets);
  const answers = await Promise.all(rig.fleets.map((f) => f.call<{ latencies: number[]; loopDelayMaxMs: number }>('latencies')));
  const { p50, p99 } = percentiles(answers.flatMap((a) => a.latencies));
  const rss = await Promise.all(rig.instances.map((i) => residentMiB(i.pid)));
  const otherCommits = commitsBetween(storageFrom, storageTo);
  const walAllBytes = storageTo.walBytes - storageFrom.walBytes;
  return {
    ...step,
    seconds: elapsedS,
    heartbeats: statsTo.ok - statsFrom.ok,
    cpuMs: {
      instances: cpuTo.instances - cpuFrom.instances,
      postgres,
      haproxy: cpuTo.haproxy - cpuFrom.haproxy,
      nats: cpuTo.nats - cpuFrom.nats,
      fleet: cpuTo.fleet - cpuFrom.fleet,
    },
    natsMsgs: natsTo - natsFrom,
    ...(otherCommits === 0 ? { walBytes: walAllBytes } : {}),
    instanceRssBytes: rss.reduce((t, r) => t + r.rss, 0) * 2 ** 20,
    p50Ms: p50,
    p99Ms: p99,
    failed: statsTo.failed - statsFrom.failed,
    connected: statsTo.connected,
    socketsPerInstance: await rig.haproxy.socketsPerServer(),
    rssMiBPerInstance: rss.map((r) => r.rss),
    walAllBytes,
    otherCommits,
    machineBusyCores: ((machineTo.busy - machineFrom.busy) / (machineTo.total - machineFrom.total)) * os.cpus().length,
    loadAverage: os.loadavg()[0]!,
    fleetLoopMaxMs: Math.max(...answers.map((a) => a.loopDelayMaxMs)),
  };
}
