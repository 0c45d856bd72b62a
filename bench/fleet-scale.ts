// B4 and B7, the fleet at scale: 10,000 simulated agents (src/fleet: reference agents with realistic
// system data, one WebSocket each) against one server, one heartbeat per agent per minute, starts spread
// over the first minute. The server and the fleet run in processes of their own (each end of 10,000
// sockets needs its own descriptors; the server's memory and CPU must be its own). The same fleet against
// a bare stand-in (Fastify parsing the bodies, a bare `ws` server holding the sockets; nothing stored) in
// the same run is the baseline.
//
// - B4, idle memory per connected agent: the server's JavaScript memory (V8 heap in use plus external
//   buffers) once every agent is connected, minus before the first one, after a full garbage collection,
//   divided by the agents. Target ≤ 2× the bare ws server's figure. Resident memory goes to the note: it
//   keeps pages the collector freed (the bare server's came out below its starting point), so it does
//   not divide well. On PGlite the database lives in the server process and counts too.
// - B7, heartbeats at one per agent per minute over the next minute: p99 of the answer time as the agents
//   see it, and the server process's CPU as a share of one core. Targets p99 < 50 ms, CPU < 25 %. The
//   agents' figure includes the fleet process's own event-loop delays (10,000 agents on one thread, which
//   real agents never share), alike for both servers; so the p99 inside the server (headers in to answer
//   out) is a row of its own.
// Measured, never asserted.
//
// Environment: BENCH_FLEET_AGENTS (10000), BENCH_FLEET_INTERVAL_S (60), BENCH_FLEET_WARMUP_S (30),
// BENCH_FLEET_MEASURE_S (60),
// BENCH_BACKENDS (the first one is used; default: PostgreSQL when it answers, else PGlite),
// BENCH_DATABASE_URL.
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { backendsFrom, percentiles, positiveNumber } from './lib/backends.js';
import { forkRpc, type RpcChild } from './lib/child-rpc.js';
import type { Backend } from './lib/databases.js';
import type { FleetStart } from './lib/fleet-child.js';
import type { CpuSample, GcTally, LoopDelay, MemorySample, ServerKind, StartedServer } from './lib/fleet-server-child.js';
import { runWhenMain, type BenchRow } from './lib/table.js';
import type { FleetStats } from '../src/fleet/fleet.js';

export const name = 'fleet-scale';
const log = (message: string) => process.stderr.write(`[${name}] ${message}\n`);
const SERVER_FILE = fileURLToPath(new URL('./lib/fleet-server-child.ts', import.meta.url));
const FLEET_FILE = fileURLToPath(new URL('./lib/fleet-child.ts', import.meta.url));
const KiB = 1024;
/** How long past the start window the fleet may take to have every agent connected. */
const CONNECT_GRACE_MS = 120_000;

interface Settings {
  agents: number;
  intervalMs: number;
  /** Steady heartbeats before measuring, after the last agent connected. */
  warmupMs: number;
  measureMs: number;
}

interface FleetFigures {
  connected: number;
  memoryPerAgentKiB: number;
  rssPerAgentKiB: number;
  p50Ms: number;
  p99Ms: number;
  serverP99Ms: number;
  heartbeats: number;
  failed: number;
  cpuPercent: number;
  eluPercent: number;
  serverLoopMaxMs: number;
  fleetLoopMaxMs: number;
  fleetRssMiB: number;
  serverScavenges: GcTally;
  serverFullGcs: GcTally;
}

/** The server's collections in the measured minute, e.g. "95 scavenges (260 ms), 4 full-collection pauses (31 ms)". */
function gcNote(f: FleetFigures): string {
  const tally = (t: GcTally, what: string) => `${t.count} ${what} (${t.pauseMs.toFixed(0)} ms)`;
  return `${tally(f.serverScavenges, 'scavenges')}, ${tally(f.serverFullGcs, 'full-collection pauses')}`;
}

type FleetChildStats = FleetStats & { rss: number };

async function waitUntilConnected(fleet: RpcChild, s: Settings, label: string): Promise<FleetChildStats> {
  const deadline = Date.now() + s.intervalMs + CONNECT_GRACE_MS;
  for (;;) {
    await delay(5000);
    const stats = await fleet.call<FleetChildStats>('stats');
    log(`${label}: ${stats.registered} registered, ${stats.connected} connected, ${stats.heartbeatsOk} heartbeats (${stats.heartbeatsFailed} failed)`);
    if (stats.connected >= s.agents) return stats;
    if (Date.now() > deadline) throw new Error(`${label}: only ${stats.connected} of ${s.agents} agents connected in time`);
  }
}

/** One server (real or bare) under the whole fleet: memory once connected, then a minute of heartbeats. */
async function measureServer(kind: ServerKind, backend: Backend, s: Settings): Promise<FleetFigures> {
  const server = forkRpc(SERVER_FILE, ['--expose-gc']);
  const fleet = forkRpc(FLEET_FILE);
  const label = kind === 'bare' ? 'bare server' : `RMM server (${backend})`;
  try {
    const started = await server.call<StartedServer>('start', { kind, backend });
    log(`${label}: listening at ${started.url}, ${started.location}`);
    await delay(1000);
    const before = await server.call<MemorySample>('memory');
    await fleet.call('start', { serverUrl: started.url, apiKey: started.apiKey, agents: s.agents, intervalMs: s.intervalMs } satisfies FleetStart);
    const connected = await waitUntilConnected(fleet, s, label);
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
    const figures: FleetFigures = {
      connected: end.connected,
      memoryPerAgentKiB: (after.heapUsed + after.external - before.heapUsed - before.external) / connected.connected / KiB,
      rssPerAgentKiB: (after.rss - before.rss) / connected.connected / KiB,
      p50Ms: p50,
      p99Ms: p99,
      serverP99Ms: serverLoop.heartbeatP99Ms,
      heartbeats: latencies.length,
      failed: end.heartbeatsFailed - connected.heartbeatsFailed,
      cpuPercent: ((cpuTo.cpuMs - cpuFrom.cpuMs) / (cpuTo.atMs - cpuFrom.atMs)) * 100,
      eluPercent: (active / (active + idle)) * 100,
      serverLoopMaxMs: serverLoop.maxMs,
      fleetLoopMaxMs: loopDelayMaxMs,
      fleetRssMiB: end.rss / KiB / KiB,
      serverScavenges: serverLoop.scavenges,
      serverFullGcs: serverLoop.fullGcs,
    };
    log(
      `${label}: ${figures.connected} connected; ${figures.memoryPerAgentKiB.toFixed(1)} KiB heap+external per agent ` +
        `(${figures.rssPerAgentKiB.toFixed(1)} KiB resident); ${figures.heartbeats} heartbeats in ${s.measureMs / 1000} s, ` +
        `p50 ${p50.toFixed(1)} ms p99 ${p99.toFixed(1)} ms (in the server p99 ${figures.serverP99Ms.toFixed(1)} ms), ${figures.failed} failed; server CPU ${figures.cpuPercent.toFixed(1)} % ` +
        `(event loop busy ${figures.eluPercent.toFixed(1)} %); longest event-loop delay: server ${figures.serverLoopMaxMs.toFixed(0)} ms, ` +
        `fleet ${figures.fleetLoopMaxMs.toFixed(0)} ms; server collections ${gcNote(figures)}; fleet process ${figures.fleetRssMiB.toFixed(0)} MiB`,
    );
    return figures;
  } finally {
    await fleet.close(120_000);
    await server.close();
  }
}

function settingsFrom(env: NodeJS.ProcessEnv): Settings {
  return {
    agents: Math.round(positiveNumber(env, 'BENCH_FLEET_AGENTS', 10_000)),
    intervalMs: positiveNumber(env, 'BENCH_FLEET_INTERVAL_S', 60) * 1000,
    warmupMs: positiveNumber(env, 'BENCH_FLEET_WARMUP_S', 30) * 1000,
    measureMs: positiveNumber(env, 'BENCH_FLEET_MEASURE_S', 60) * 1000,
  };
}

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const s = settingsFrom(env);
  const backend = (await backendsFrom(env))[0]!;
  const bare = await measureServer('bare', backend, s);
  const rmm = await measureServer('rmm', backend, s);
  const agents = `${s.agents} agents`;
  const base = { benchmark: name, backend };
  const heartbeatsNote = (f: FleetFigures) =>
    `${f.heartbeats} heartbeats, ${f.failed} failed, ${f.connected} connected at the end, longest event-loop delay ` +
    `${f.serverLoopMaxMs.toFixed(0)} ms in the server and ${f.fleetLoopMaxMs.toFixed(0)} ms in the fleet`;
  return [
    {
      ...base,
      setting: `${agents}, idle memory`,
      figure: rmm.memoryPerAgentKiB,
      unit: 'KiB/agent',
      baseline: bare.memoryPerAgentKiB,
      baselineLabel: 'bare ws KiB/socket',
      better: 'lower',
      note:
        `B4, target ≤ 2× the baseline. V8 heap + external after a full GC; resident memory ${rmm.rssPerAgentKiB.toFixed(1)} KiB/agent ` +
        `(bare ${bare.rssPerAgentKiB.toFixed(1)}). The fleet process held ${s.agents} agents in ${rmm.fleetRssMiB.toFixed(0)} MiB.`,
    },
    {
      ...base,
      setting: `${agents}, 1 heartbeat/min, p99`,
      figure: rmm.p99Ms,
      unit: 'ms',
      baseline: bare.p99Ms,
      baselineLabel: 'bare server p99 ms',
      better: 'lower',
      p50Ms: rmm.p50Ms,
      p99Ms: rmm.p99Ms,
      errors: rmm.failed,
      note:
        `B7, target p99 < 50 ms. Measured over ${s.measureMs / 1000} s after all agents connected and ${s.warmupMs / 1000} s more of heartbeats. ` +
        `${heartbeatsNote(rmm)}; bare: ${heartbeatsNote(bare)}, p50 ${bare.p50Ms.toFixed(1)} ms`,
    },
    {
      ...base,
      setting: `${agents}, 1 heartbeat/min, p99 in the server`,
      figure: rmm.serverP99Ms,
      unit: 'ms',
      baseline: bare.serverP99Ms,
      baselineLabel: 'bare server p99 ms',
      better: 'lower',
      p99Ms: rmm.serverP99Ms,
      note: 'B7 without the fleet process: from the request headers to the answer, measured inside the server',
    },
    {
      ...base,
      setting: `${agents}, 1 heartbeat/min, server CPU`,
      figure: rmm.cpuPercent,
      unit: '% of a core',
      baseline: bare.cpuPercent,
      baselineLabel: 'bare server % of a core',
      better: 'lower',
      note:
        `B7, target < 25 %. Event loop busy ${rmm.eluPercent.toFixed(1)} % (bare ${bare.eluPercent.toFixed(1)} %). ` +
        `Collections in the minute: ${gcNote(rmm)} (bare: ${gcNote(bare)})`,
    },
  ];
}

runWhenMain(import.meta.url, () => run());
