// One server (the real one or the bare stand-in) under the whole simulated fleet, for fleet-scale.ts (B4,
// B7): memory once every agent is connected, then a minute of steady heartbeats. The server and the fleet
// each run in a process of their own (each end of 10,000 sockets needs its own descriptors; the server's
// memory, CPU and collections must be its own). A failed start-up is returned as figures with `failure`
// set, never only logged, so the table shows it.
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { percentiles } from './backends.js';
import { SERVER_NODE_ENV, SERVER_NODE_FLAGS } from '../../src/platform/node-flags.js';
import { forkRpc, type RpcChild } from './child-rpc.js';
import type { Backend } from './databases.js';
import type { FleetStart } from './fleet-child.js';
import type { CpuSample, GcTally, LoopDelay, MemorySample, ServerKind, StartParams, StartedServer } from './fleet-server-child.js';
import type { FleetStats } from '../../src/fleet/fleet.js';

const SERVER_FILE = fileURLToPath(new URL('./fleet-server-child.ts', import.meta.url));
const FLEET_FILE = fileURLToPath(new URL('./fleet-child.ts', import.meta.url));
const KiB = 1024;
/** How long past the start window the fleet may take to have every agent connected. */
const CONNECT_GRACE_MS = 120_000;

export interface FleetSettings {
  agents: number;
  intervalMs: number;
  /** Steady heartbeats before measuring, after the last agent connected. */
  warmupMs: number;
  measureMs: number;
  /** Node flags for both server processes alike (e.g. a young-generation size), besides --expose-gc. */
  serverFlags: string[];
}

export interface FleetFigures {
  /** Why the run gave no figures (a server or fleet that did not start, agents that did not connect). */
  failure?: string;
  connected: number;
  /** Heartbeats that failed while the fleet started (before the measured minute). */
  startFailed: number;
  memoryPerAgentKiB: number;
  rssPerAgentKiB: number;
  p50Ms: number;
  p99Ms: number;
  serverP99Ms: number;
  /** Heartbeats the agents saw answered in the measured minute. */
  heartbeats: number;
  /** Heartbeats the server answered in the measured minute. */
  serverHeartbeats: number;
  /** Heartbeats that failed in the measured minute. */
  failed: number;
  cpuPercent: number;
  cpuUsPerHeartbeat: number;
  eluPercent: number;
  serverLoopMaxMs: number;
  fleetLoopMaxMs: number;
  fleetRssMiB: number;
  serverScavenges: GcTally;
  serverFullGcs: GcTally;
}

const emptyTally = (): GcTally => ({ count: Number.NaN, pauseMs: Number.NaN });

function failedFigures(failure: string, startFailed: number): FleetFigures {
  return {
    failure,
    connected: 0,
    startFailed,
    memoryPerAgentKiB: Number.NaN,
    rssPerAgentKiB: Number.NaN,
    p50Ms: Number.NaN,
    p99Ms: Number.NaN,
    serverP99Ms: Number.NaN,
    heartbeats: 0,
    serverHeartbeats: 0,
    failed: 0,
    cpuPercent: Number.NaN,
    cpuUsPerHeartbeat: Number.NaN,
    eluPercent: Number.NaN,
    serverLoopMaxMs: Number.NaN,
    fleetLoopMaxMs: Number.NaN,
    fleetRssMiB: Number.NaN,
    serverScavenges: emptyTally(),
    serverFullGcs: emptyTally(),
  };
}

/** The server's collections in the measured minute, e.g. "95 scavenges (260 ms), 4 full-collection pauses (31 ms)". */
export function gcNote(f: FleetFigures): string {
  const tally = (t: GcTally, what: string) => `${t.count} ${what} (${t.pauseMs.toFixed(0)} ms)`;
  return `${tally(f.serverScavenges, 'scavenges')}, ${tally(f.serverFullGcs, 'full-collection pauses')}`;
}

export type FleetChildStats = FleetStats & { rss: number; cpuMs: number };

/** The fleet's failure reasons, most frequent first: ": 12× HTTP # …; 3× …" (empty when none failed). */
export function reasonsOf(stats: FleetChildStats): string {
  const reasons = Object.entries(stats.failureReasons ?? {}).sort((x, y) => y[1] - x[1]);
  return reasons.length === 0 ? '' : `: ${reasons.map(([why, n]) => `${n}× ${why}`).join('; ')}`;
}

/** Polls the fleet every 5 s until every agent is connected; throws (with the failed heartbeats) past the start window and its grace. */
export async function waitUntilConnected(fleet: RpcChild, s: FleetSettings, log: (m: string) => void): Promise<FleetChildStats> {
  const deadline = Date.now() + s.intervalMs + CONNECT_GRACE_MS;
  for (;;) {
    await delay(5000);
    const stats = await fleet.call<FleetChildStats>('stats');
    log(`${stats.registered} registered, ${stats.connected} connected, ${stats.heartbeatsOk} heartbeats (${stats.heartbeatsFailed} failed${reasonsOf(stats)})`);
    if (stats.connected >= s.agents) return stats;
    if (Date.now() > deadline) {
      const err = new Error(`only ${stats.connected} of ${s.agents} agents connected in time`) as Error & { startFailed?: number };
      err.startFailed = stats.heartbeatsFailed;
      throw err;
    }
  }
}

/** The whole fleet against one server: B4's memory, then B7's minute. */
export async function measureServer(kind: ServerKind, backend: Backend, s: FleetSettings, log: (m: string) => void): Promise<FleetFigures> {
  // The real server with the Node flags it runs with in production (the bare stand-in with Node's own).
  const server = forkRpc(SERVER_FILE, ['--expose-gc', ...(kind === 'rmm' ? SERVER_NODE_FLAGS : []), ...s.serverFlags], kind === 'rmm' ? SERVER_NODE_ENV : {});
  const fleet = forkRpc(FLEET_FILE);
  const label = kind === 'bare' ? 'bare server' : `RMM server (${backend})`;
  const say = (m: string) => log(`${label}: ${m}`);
  try {
    // The real server logs like production (level info to /dev/null: agent traffic's per-request lines
    // are at debug, with a summary a minute at info); the bare stand-in logs nothing, it is the floor.
    const params: StartParams = kind === 'bare' ? { kind, backend } : { kind, backend, logLevel: 'info' };
    const started = await server.call<StartedServer>('start', params);
    say(`listening at ${started.url}, ${started.location}`);
    await delay(1000);
    const before = await server.call<MemorySample>('memory');
    await fleet.call('start', { serverUrl: started.url, apiKey: started.apiKey, agents: s.agents, intervalMs: s.intervalMs } satisfies FleetStart);
    const connected = await waitUntilConnected(fleet, s, say);
    const after = await server.call<MemorySample>('memory');

    // Start-up is not the steady state: every agent's first heartbeat (a Windows one stores its software
    // inventory), the sockets' upgrades, and the forced collections just above.
    await delay(s.warmupMs);
    await fleet.call('latencies');
    await server.call('delays');
    const cpuFrom = await server.call<CpuSample>('cpu');
    await delay(s.measureMs);
    const cpuTo = await server.call<CpuSample>('cpu');
    const serverLoop = await server.call<LoopDelay>('delays');
    const { latencies, loopDelayMaxMs } = await fleet.call<{ latencies: number[]; loopDelayMaxMs: number }>('latencies');
    const end = await fleet.call<FleetChildStats>('stats');

    const { p50, p99 } = percentiles(latencies);
    const active = cpuTo.elu.active - cpuFrom.elu.active;
    const idle = cpuTo.elu.idle - cpuFrom.elu.idle;
    const cpuMs = cpuTo.cpuMs - cpuFrom.cpuMs;
    const f: FleetFigures = {
      connected: end.connected,
      startFailed: connected.heartbeatsFailed,
      memoryPerAgentKiB: (after.heapUsed + after.external - before.heapUsed - before.external) / connected.connected / KiB,
      rssPerAgentKiB: (after.rss - before.rss) / connected.connected / KiB,
      p50Ms: p50,
      p99Ms: p99,
      serverP99Ms: serverLoop.heartbeatP99Ms,
      heartbeats: latencies.length,
      serverHeartbeats: serverLoop.heartbeats,
      failed: end.heartbeatsFailed - connected.heartbeatsFailed,
      cpuPercent: (cpuMs / (cpuTo.atMs - cpuFrom.atMs)) * 100,
      // Everything the server did in the minute (keep-alive pings, timers, collections) per heartbeat.
      cpuUsPerHeartbeat: serverLoop.heartbeats > 0 ? (cpuMs * 1000) / serverLoop.heartbeats : Number.NaN,
      eluPercent: (active / (active + idle)) * 100,
      serverLoopMaxMs: serverLoop.maxMs,
      fleetLoopMaxMs: loopDelayMaxMs,
      fleetRssMiB: end.rss / KiB / KiB,
      serverScavenges: serverLoop.scavenges,
      serverFullGcs: serverLoop.fullGcs,
    };
    say(
      `${f.connected} connected (${f.startFailed} heartbeats failed while starting); ${f.memoryPerAgentKiB.toFixed(1)} KiB heap+external per agent ` +
        `(${f.rssPerAgentKiB.toFixed(1)} KiB resident); ${f.heartbeats} heartbeats in ${s.measureMs / 1000} s, ` +
        `p50 ${p50.toFixed(1)} ms p99 ${p99.toFixed(1)} ms (in the server p99 ${f.serverP99Ms.toFixed(1)} ms), ${f.failed} failed; ` +
        `server CPU ${f.cpuPercent.toFixed(1)} % = ${f.cpuUsPerHeartbeat.toFixed(0)} µs/heartbeat (event loop busy ${f.eluPercent.toFixed(1)} %); ` +
        `longest event-loop delay: server ${f.serverLoopMaxMs.toFixed(0)} ms, fleet ${f.fleetLoopMaxMs.toFixed(0)} ms; ` +
        `server collections ${gcNote(f)}; fleet process ${f.fleetRssMiB.toFixed(0)} MiB`,
    );
    return f;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    say(`failed: ${message}`);
    const startFailed = (err as { startFailed?: number }).startFailed ?? 0;
    return failedFigures(`${label}: ${message}`, startFailed);
  } finally {
    await fleet.close(120_000);
    await server.close();
  }
}
