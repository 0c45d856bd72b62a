// One steady window of capacity.ts: what the server (and PostgreSQL's backends) spent while a connected
// fleet sent its heartbeats, read from the server's process and the fleets' own counters.
import { setTimeout as delay } from 'node:timers/promises';
import { percentiles } from './backends.js';
import type { RpcChild } from './child-rpc.js';
import { commitsBetween, type Storage, type Traffic } from './capacity-probes.js';
import type { CapacityPoint } from './capacity-sizing.js';
import type { FleetChildStats } from './fleet-measure.js';
import type { CpuSample, LoopDelay, MemorySample } from './fleet-server-child.js';

export interface WindowFigures extends CapacityPoint {
  /** Heartbeats that failed in the window, and the fleets' connected agents at its end. */
  failed: number;
  connected: number;
  serverP99Ms: number;
  agentP99Ms: number;
  /** Transactions other databases committed in the window (their WAL is in walBytes too). */
  otherCommits: number;
  databaseBytes: number;
  /** Checkpoints begun in the window (cluster-wide on PostgreSQL). */
  checkpoints: number;
  /** The whole database's growth in the window (pg_database_size). */
  databaseGrowthBytes: number;
}

/**
 * PostgreSQL's backends' CPU over a window, read every 2 s: the pool closes connections idle for 10 s,
 * and a backend that exits takes its time since the last read with it. Undefined on PGlite.
 */
function watchDatabaseCpu(server: RpcChild): { stop(): Promise<number | undefined> } {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  let unreadable = false;
  let started = false;
  const read = async () => {
    const ticks = await server.call<Array<[number, number]> | null>('backendTicks').catch(() => null);
    if (!ticks) return void (unreadable = true);
    // Backends seen at the first read count from there; any that appears later counts from zero.
    for (const [pid, t] of ticks) {
      if (!first.has(pid)) first.set(pid, started ? 0 : t);
      last.set(pid, t);
    }
    started = true;
  };
  let reading = read();
  const timer = setInterval(() => (reading = reading.then(read)), 2000);
  return {
    async stop() {
      clearInterval(timer);
      await reading;
      await read();
      if (unreadable) return undefined;
      let ticks = 0;
      for (const [pid, t] of last) ticks += t - (first.get(pid) ?? 0);
      return ticks * 10; // USER_HZ is 100: a tick is 10 ms
    },
  };
}

const sumStats = (all: FleetChildStats[]) => ({
  failed: all.reduce((n, s) => n + s.heartbeatsFailed, 0),
  connected: all.reduce((n, s) => n + s.connected, 0),
});

export async function measureWindow(server: RpcChild, fleets: RpcChild[], agents: number, seconds: number, postgres: boolean): Promise<WindowFigures> {
  for (const fleet of fleets) await fleet.call('latencies');
  await server.call('delays');
  const statsFrom = sumStats(await Promise.all(fleets.map((f) => f.call<FleetChildStats>('stats'))));
  const storageFrom = await server.call<Storage>('storage');
  const trafficFrom = await server.call<Traffic>('traffic');
  const database = postgres ? watchDatabaseCpu(server) : undefined;
  const cpuFrom = await server.call<CpuSample>('cpu');
  await delay(seconds * 1000);
  const cpuTo = await server.call<CpuSample>('cpu');
  const databaseCpuMs = await database?.stop();
  const trafficTo = await server.call<Traffic>('traffic');
  const loop = await server.call<LoopDelay>('delays');
  const storageTo = await server.call<Storage>('storage');
  const latencies = (await Promise.all(fleets.map((f) => f.call<{ latencies: number[] }>('latencies')))).flatMap((l) => l.latencies);
  const statsTo = sumStats(await Promise.all(fleets.map((f) => f.call<FleetChildStats>('stats'))));
  // Last, since it forces full collections, which would otherwise be in the window's CPU.
  const memory = await server.call<MemorySample>('memory');
  return {
    agents,
    seconds: (cpuTo.atMs - cpuFrom.atMs) / 1000,
    serverCpuMs: cpuTo.cpuMs - cpuFrom.cpuMs,
    ...(databaseCpuMs !== undefined ? { databaseCpuMs } : {}),
    heartbeats: loop.heartbeats,
    rssBytes: memory.rss,
    heapBytes: memory.heapUsed + memory.external,
    bytesIn: trafficTo.bytesIn - trafficFrom.bytesIn,
    bytesOut: trafficTo.bytesOut - trafficFrom.bytesOut,
    metricBytes: storageTo.metricBytes - storageFrom.metricBytes,
    samples: storageTo.samples - storageFrom.samples,
    walBytes: storageTo.walBytes - storageFrom.walBytes,
    otherCommits: commitsBetween(storageFrom, storageTo),
    walShared: commitsBetween(storageFrom, storageTo) > 0,
    checkpoints: storageTo.checkpoints - storageFrom.checkpoints,
    databaseGrowthBytes: storageTo.databaseBytes - storageFrom.databaseBytes,
    databaseBytes: storageTo.databaseBytes,
    failed: statsTo.failed - statsFrom.failed,
    connected: statsTo.connected,
    serverP99Ms: loop.heartbeatP99Ms,
    agentP99Ms: percentiles(latencies).p99,
  };
}
