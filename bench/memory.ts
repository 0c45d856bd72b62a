// The default install's memory (issue 62, build 1): the built server (dist/src/main.js with its
// production Node flags, as `npm start` runs it) on the embedded database in a data directory of its
// own, its resident memory read from outside (/proc/<pid>/status: VmRSS now, VmHWM the peak so far).
// 1. First start, on an empty data directory: the peak of the server and the child that fills its
//    database, from the spawn to 120 s after it listens (target ≤ 512 MiB).
// 2. Idle: the same directory, started again: the median resident memory 60–120 s after it listens
//    (target ≤ 256 MiB).
// 3. BENCH_MEMORY_AGENTS (1,000) simulated agents (src/fleet, realistic system data, a process of their
//    own), one heartbeat a minute each, for BENCH_MEMORY_MINUTES (30): the peak (target ≤ 512 MiB) and
//    the growth over the run's second half, the median of its last five minutes minus the median of the
//    five minutes around its middle (target ≤ 8 MiB: memory that levels off does not grow there).
// Baseline: the bare stand-in (bench/lib/bare-agent-server.ts: Fastify parsing the bodies and a bare
// `ws` server, storing nothing) as plain JavaScript under Node, idle and under the same fleet for three
// minutes: what Node holding the same sockets costs. Failed heartbeats are the `errors`; a failed start-up is a row.
//
// Environment: BENCH_MEMORY_AGENTS (1000), BENCH_MEMORY_MINUTES (30), BENCH_MEMORY_SETTLE_S (60),
// PGLITE_SHARED_BUFFERS_MB (the server's own setting, passed through).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { positiveNumber } from './lib/backends.js';
import { buildIfStale, familyResidentMiB, residentMiB, startBuiltServer, startPlainBare, type BuiltServer } from './lib/built-server.js';
import { forkRpc, type RpcChild } from './lib/child-rpc.js';
import { makeKeys, pidCpuMs } from './lib/cluster-processes.js';
import type { FleetStart } from './lib/fleet-child.js';
import { reasonsOf, type FleetChildStats } from './lib/fleet-measure.js';
import { median } from './lib/stats.js';
import { runWhenMain, type BenchRow, type Target } from './lib/table.js';

export const name = 'memory';
const log = (message: string) => process.stderr.write(`[${name}] ${message}\n`);
const PASSWORD = 'bench-memory-password';
const IDLE_TARGET: Target = { op: '≤', value: 256, of: 'figure' };
const LOADED_TARGET: Target = { op: '≤', value: 512, of: 'figure' };
const GROWTH_TARGET: Target = { op: '≤', value: 8, of: 'figure' };
const SAMPLE_MS = 5000;
const BARE_FLEET_MS = 180_000;
const FLEET_CHILD = fileURLToPath(new URL('./lib/fleet-child.ts', import.meta.url));

interface Settings {
  agents: number;
  minutes: number;
  settleMs: number;
}

interface Bare {
  idle: number;
  loaded: number;
  failure?: string;
}

/** Resident memory of the bare stand-in, idle and under the fleet (its peak in the three minutes). */
async function measureBare(s: Settings): Promise<Bare> {
  let server: BuiltServer | undefined;
  const fleet = forkRpc(FLEET_CHILD);
  try {
    server = await startPlainBare();
    await delay(10_000);
    const idle = (await residentMiB(server.child.pid!)).rss;
    await fleet.call('start', { serverUrl: server.url, apiKey: 'bare', agents: s.agents, intervalMs: 60_000 } satisfies FleetStart);
    await delay(BARE_FLEET_MS);
    const loaded = (await residentMiB(server.child.pid!)).peak;
    log(`bare stand-in: ${idle.toFixed(0)} MiB idle, peak ${loaded.toFixed(0)} MiB with ${s.agents} agents`);
    return { idle, loaded };
  } catch (err) {
    return { idle: Number.NaN, loaded: Number.NaN, failure: `bare stand-in: ${err instanceof Error ? err.message : String(err)}` };
  } finally {
    await fleet.close(120_000);
    await server?.stop();
  }
}

interface Settled {
  server: BuiltServer;
  /** The median resident memory over the `settleMs` after the first `settleMs`, sampled every 5 s. */
  rss: number;
  /** The lowest and highest of those samples. */
  range: [number, number];
  /** The server's own high-water mark until the end. */
  peak: number;
  /** The peak of the server and its children together. */
  familyPeak: number;
}

/**
 * Starts the built server on `dataDir` and lets it settle for `settleMs` after it listens, then samples
 * its resident memory for `settleMs` more: an idle server shrinks its heap only once V8 sees it idle,
 * which a busy machine delays (one sample at 60 s read 315 MiB under a CI run, 251 on a quieter one).
 * The peak of it and its children together is sampled every 100 ms: a first start fills the database in
 * a child process, and a machine must hold both at once.
 */
async function startAndSettle(dataDir: string, s: Settings): Promise<Settled> {
  let familyPeak = 0;
  let pid: number | undefined;
  const sampler = setInterval(() => {
    if (pid) void familyResidentMiB(pid).then((mib) => void (familyPeak = Math.max(familyPeak, mib)), () => undefined);
  }, 100);
  try {
    const server = await startBuiltServer({ DATA_DIR: dataDir, ADMIN_PASSWORD: PASSWORD }, (child) => void (pid = child.pid));
    await delay(s.settleMs);
    const samples: number[] = [];
    for (let at = 0; at < s.settleMs; at += SAMPLE_MS) {
      samples.push((await residentMiB(server.child.pid!)).rss);
      await delay(SAMPLE_MS);
    }
    const own = await residentMiB(server.child.pid!);
    return { server, rss: median(samples), range: [Math.min(...samples), Math.max(...samples)], peak: own.peak, familyPeak: Math.max(familyPeak, own.peak) };
  } finally {
    clearInterval(sampler);
  }
}

/** The median of the samples taken in [fromMs, toMs) of the run. */
const medianBetween = (samples: { atMs: number; rss: number }[], fromMs: number, toMs: number) =>
  median(samples.filter((x) => x.atMs >= fromMs && x.atMs < toMs).map((x) => x.rss));

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const s: Settings = {
    agents: Math.round(positiveNumber(env, 'BENCH_MEMORY_AGENTS', 1000)),
    minutes: positiveNumber(env, 'BENCH_MEMORY_MINUTES', 30),
    settleMs: positiveNumber(env, 'BENCH_MEMORY_SETTLE_S', 60) * 1000,
  };
  const buffers = env.PGLITE_SHARED_BUFFERS_MB ? `, PGLITE_SHARED_BUFFERS_MB=${env.PGLITE_SHARED_BUFFERS_MB}` : '';
  const base = { benchmark: name, backend: 'pglite', unit: 'MiB', better: 'lower' as const, baselineLabel: 'bare stand-in MiB' };
  buildIfStale();
  const bare = await measureBare(s);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-bench-memory-'));
  let server: BuiltServer | undefined;
  const rows: BenchRow[] = [];
  try {
    const first = await startAndSettle(dataDir, s);
    const window = `${s.settleMs / 1000}–${(2 * s.settleMs) / 1000} s after it listened`;
    const spread = (x: Settled) => `median ${x.rss.toFixed(0)} MiB ${window} (${x.range[0].toFixed(0)}–${x.range[1].toFixed(0)})`;
    log(`first start: listening after ${first.server.startMs} ms, peak ${first.familyPeak.toFixed(0)} MiB with its child (its own ${first.peak.toFixed(0)}), ${spread(first)}`);
    rows.push({ ...base, setting: `first start on an empty data directory, peak${buffers}`, figure: first.familyPeak, baseline: bare.idle, target: LOADED_TARGET, note: `the server and the child that fills its database, together, from the spawn to ${(2 * s.settleMs) / 1000} s after it listened (after ${first.server.startMs} ms); the server's own peak ${first.peak.toFixed(0)} MiB; then ${spread(first)}. Baseline: the bare stand-in idle.` });
    await first.server.stop();

    const again = await startAndSettle(dataDir, s);
    server = again.server;
    log(`idle: ${spread(again)} (peak ${again.peak.toFixed(0)} MiB)`);
    rows.push({ ...base, setting: `idle, started again${buffers}`, figure: again.rss, baseline: bare.idle, target: IDLE_TARGET, note: `${spread(again)}; peak while starting ${again.peak.toFixed(0)} MiB. ${bare.failure ?? ''}` });
    rows.push(...(await underFleet(server, s, bare, { ...base, buffers })));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    log(`failed: ${message}`);
    rows.push({ ...base, setting: `the built server${buffers}`, figure: Number.NaN, baseline: bare.idle, note: `FAILED: ${message}` });
  } finally {
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  return rows;
}

type Base = Pick<BenchRow, 'benchmark' | 'backend' | 'unit' | 'better' | 'baselineLabel'> & { buffers: string };

/** The fleet against the running server for the run's minutes: the peak and the second half's growth. */
async function underFleet(server: BuiltServer, s: Settings, bare: Bare, { buffers, ...base }: Base): Promise<BenchRow[]> {
  const pid = server.child.pid!;
  const { agent } = await makeKeys(`${server.url}/api/v1`, PASSWORD);
  const fleet: RpcChild = forkRpc(FLEET_CHILD);
  const samples: { atMs: number; rss: number }[] = [];
  const runMs = s.minutes * 60_000;
  try {
    const cpuFrom = await pidCpuMs(pid);
    await fleet.call('start', { serverUrl: server.url, apiKey: agent, agents: s.agents, intervalMs: 60_000 } satisfies FleetStart);
    const startedAt = Date.now();
    let startPeak = Number.NaN;
    while (Date.now() - startedAt < runMs) {
      await delay(SAMPLE_MS);
      const now = await residentMiB(pid);
      samples.push({ atMs: Date.now() - startedAt, rss: now.rss });
      if (samples.length % 12 === 0) log(`minute ${(samples.length / 12).toFixed(0)}: ${now.rss.toFixed(0)} MiB (peak ${now.peak.toFixed(0)})`);
      if (Number.isNaN(startPeak) && Date.now() - startedAt > 60_000) startPeak = now.peak;
    }
    const cpuMs = (await pidCpuMs(pid)) - cpuFrom;
    const stats = await fleet.call<FleetChildStats>('stats');
    const peak = (await residentMiB(pid)).peak;
    const middle = medianBetween(samples, runMs / 2 - 150_000, runMs / 2 + 150_000);
    const last = medianBetween(samples, runMs - 300_000, runMs + 1);
    const setting = `${s.agents} agents, 1 heartbeat/min, ${s.minutes} min${buffers}`;
    const errors = stats.heartbeatsFailed;
    const load = `${stats.connected} connected at the end, ${stats.heartbeatsOk} heartbeats (${errors} failed${reasonsOf(stats)}); server CPU ${((cpuMs / runMs) * 100).toFixed(1)} % of a core over the run, the agents' first connections included`;
    log(`${setting}: peak ${peak.toFixed(0)} MiB, middle ${middle.toFixed(0)}, last five minutes ${last.toFixed(0)}; ${load}`);
    return [
      { ...base, setting: `${setting}, peak`, figure: peak, baseline: bare.loaded, target: LOADED_TARGET, errors, note: `the process's high-water mark since it was started again (the start's peak, the fleet's first minute ${startPeak.toFixed(0)} MiB, included). ${load}. Baseline: the bare stand-in's peak with the same fleet for ${BARE_FLEET_MS / 60_000} min. ${bare.failure ?? ''}` },
      { ...base, setting: `${setting}, growth over the second half`, figure: last - middle, baseline: Number.NaN, baselineLabel: '–', target: GROWTH_TARGET, errors, note: `median resident memory of the last five minutes (${last.toFixed(0)} MiB) minus that of the five around the middle (${middle.toFixed(0)} MiB); every minute: ${minuteMedians(samples).join(', ')} MiB` },
    ];
  } finally {
    await fleet.close(120_000);
  }
}

/** The median resident memory of each minute of the run, rounded. */
function minuteMedians(samples: { atMs: number; rss: number }[]): string[] {
  const minutes = Math.ceil((samples[samples.length - 1]?.atMs ?? 0) / 60_000);
  return Array.from({ length: minutes }, (_, m) => medianBetween(samples, m * 60_000, (m + 1) * 60_000).toFixed(0));
}

runWhenMain(import.meta.url, () => run());
