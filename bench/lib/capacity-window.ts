// One steady window of capacity.ts: what the server (and PostgreSQL's backends) spent while a connected
// fleet sent its heartbeats, read from outside the server's process (bench/lib/capacity-server.ts) and
// from the fleets' own counters.
import { setTimeout as delay } from 'node:timers/promises';
import { percentiles } from './backends.js';
import { median } from './stats.js';
import type { RpcChild } from './child-rpc.js';
import { commitsBetween } from './capacity-probes.js';
import type { CapacityServer } from './capacity-server.js';
import type { CapacityPoint } from './capacity-sizing.js';
import type { FleetChildStats } from './fleet-measure.js';
import { quantileBetween } from './prometheus-scrape.js';

export interface WindowFigures extends CapacityPoint {
  /** Heartbeats that failed in the window, and the fleets' connected agents at its end. */
  failed: number;
  connected: number;
  serverP99Ms: number;
  agentP99Ms: number;
  /** The lowest and highest resident memory read in the window (rssBytes is their median). */
  rssRange: [number, number];
  /** Transactions other databases committed in the window (their WAL is in walBytes too). */
  otherCommits: number;
  databaseBytes: number;
  /** Checkpoints begun in the window (cluster-wide on PostgreSQL; on PGlite 1 when any, from its files). */
  checkpoints: number;
  /** The whole database's growth in the window (pg_database_size). */
  databaseGrowthBytes: number;
}

/** Calls `read` now and every 2 s, one call at a time; the function returned stops it after one last read. */
function every2s(read: () => Promise<void>): () => Promise<void> {
  let reading = read();
  const timer = setInterval(() => (reading = reading.then(read)), 2000);
  return async () => {
    clearInterval(timer);
    await reading;
    await read();
  };
}

/**
 * PostgreSQL's backends' CPU over a window, read every 2 s: the pool closes connections idle for 10 s,
 * and a backend that exits takes its time since the last read with it. Undefined on PGlite.
 */
function watchDatabaseCpu(server: CapacityServer): { stop(): Promise<number | undefined> } {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  let unreadable = false;
  let started = false;
  const read = async () => {
    const ticks = await server.backendTicks().catch(() => undefined);
    if (!ticks) return void (unreadable = true);
    // Backends seen at the first read count from there; any that appears later counts from zero.
    for (const [pid, t] of ticks) {
      if (!first.has(pid)) first.set(pid, started ? 0 : t);
      last.set(pid, t);
    }
    started = true;
  };
  const stopReading = every2s(read);
  return {
    async stop() {
      await stopReading();
      if (unreadable) return undefined;
      let ticks = 0;
      for (const [pid, t] of last) ticks += t - (first.get(pid) ?? 0);
      return ticks * 10; // USER_HZ is 100: a tick is 10 ms
    },
  };
}

/**
 * The server's resident memory over a window, read from /proc every 2 s, as the median and the range:
 * with no forced collection (the built server has no --expose-gc) one read at the end lands anywhere
 * in the heap's growth and shrinking (a short run read 337 MiB at 50 agents, 278 at 200).
 */
function watchResident(server: CapacityServer): { stop(): Promise<{ median: number; min: number; max: number }> } {
  const reads: number[] = [];
  const read = () => server.rssBytes().then((b) => void reads.push(b), () => undefined);
  const stopReading = every2s(read);
  return {
    async stop() {
      await stopReading();
      return { median: median(reads), min: Math.min(...reads), max: Math.max(...reads) };
    },
  };
}

const sumStats = (all: FleetChildStats[]) => ({
  failed: all.reduce((n, s) => n + s.heartbeatsFailed, 0),
  connected: all.reduce((n, s) => n + s.connected, 0),
});

export async function measureWindow(server: CapacityServer, fleets: RpcChild[], agents: number, seconds: number, postgres: boolean): Promise<WindowFigures> {
  for (const fleet of fleets) await fleet.call('latencies');
  const statsFrom = sumStats(await Promise.all(fleets.map((f) => f.call<FleetChildStats>('stats'))));
  const storageFrom = await server.storage();
  const scrapeFrom = await server.scrape();
  const trafficFrom = server.traffic();
  const database = postgres ? watchDatabaseCpu(server) : undefined;
  const resident = watchResident(server);
  const cpuFrom = await server.cpu();
  await delay(seconds * 1000);
  const cpuTo = await server.cpu();
  const databaseCpuMs = await database?.stop();
  const rss = await resident.stop();
  const trafficTo = server.traffic();
  // A scrape costs the server some CPU; these two are outside the window's CPU reads.
  const scrapeTo = await server.scrape();
  const storageTo = await server.storage();
  const latencies = (await Promise.all(fleets.map((f) => f.call<{ latencies: number[] }>('latencies')))).flatMap((l) => l.latencies);
  const statsTo = sumStats(await Promise.all(fleets.map((f) => f.call<FleetChildStats>('stats'))));
  return {
    agents,
    seconds: (cpuTo.atMs - cpuFrom.atMs) / 1000,
    serverCpuMs: cpuTo.cpuMs - cpuFrom.cpuMs,
    ...(databaseCpuMs !== undefined ? { databaseCpuMs } : {}),
    heartbeats: scrapeTo.heartbeats - scrapeFrom.heartbeats,
    rssBytes: rss.median,
    rssRange: [rss.min, rss.max],
    // No forced collection (the built server runs without --expose-gc): the heap as it stands at the end.
    heapBytes: scrapeTo.heapBytes,
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
    serverP99Ms: quantileBetween(scrapeFrom, scrapeTo, 0.99),
    agentP99Ms: percentiles(latencies).p99,
  };
}
