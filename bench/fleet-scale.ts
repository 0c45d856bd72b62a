// B4 and B7, the fleet at scale: 10,000 simulated agents (src/fleet: reference agents with realistic
// system data, one WebSocket each) against one server, one heartbeat per agent per minute, starts spread
// over the first minute (bench/lib/fleet-measure.ts). The baseline is the same fleet against the bare
// stand-in (Fastify parsing the bodies, a bare `ws` server holding and pinging the sockets; nothing
// stored), measured in the same run: BENCH_FLEET_RUNS runs, each a pair (bare, then real), the ratios
// the medians of the pairs' ratios. The real server logs like production (info, to /dev/null).
//
// - B4, idle memory per connected agent: V8 heap in use plus external buffers once every agent is
//   connected, minus before the first one, after a full collection, ÷ agents. Target ≤ 2× the bare
//   figure. Resident memory goes to the note (it keeps pages the collector freed).
// - B7, over the minute after 30 s more of steady heartbeats: p99 as the agents see it (the fleet's own
//   event-loop delays included), p99 inside the server (headers in to answer out), the server's CPU as a
//   share of a core and per heartbeat, and its scavenge time. Targets: p99 < 50 ms (on PGlite: < 250 ms as
//   the agents see it, issue 36 build 4), CPU < 25 %, scavenge
//   time ≤ 3× the bare stand-in's. Issue 36 build 5 asks for five runs in a row, each with p99 inside the
//   server < 50 ms and scavenges ≤ 3× bare: BENCH_FLEET_RUNS=5 prints a row per run and the verdict.
// Every failed heartbeat (while starting or measured) and every failed start-up is in the table.
// Measured, never asserted.
//
// Environment: BENCH_FLEET_AGENTS (10000), BENCH_FLEET_INTERVAL_S (60), BENCH_FLEET_WARMUP_S (30),
// BENCH_FLEET_MEASURE_S (60), BENCH_FLEET_RUNS (1), BENCH_FLEET_SERVER_FLAGS (Node flags for both
// servers alike, after the real server's production flags of src/platform/node-flags.ts; none by
// default), BENCH_BACKENDS (the first one is used; default: PostgreSQL when it answers, else PGlite),
// BENCH_DATABASE_URL.
import { backendsFrom, nodeFlags, positiveNumber } from './lib/backends.js';
import { SERVER_NODE_FLAGS } from '../src/platform/node-flags.js';
import { gcNote, measureServer, type FleetFigures, type FleetSettings } from './lib/fleet-measure.js';
import { median } from './lib/stats.js';
import { meets, runWhenMain, type BenchRow, type Target } from './lib/table.js';

export const name = 'fleet-scale';
const log = (message: string) => process.stderr.write(`[${name}] ${message}\n`);

const TARGET_MEMORY: Target = { op: '≤', value: 2 };
const TARGET_P99_MS: Target = { op: '<', value: 50, of: 'figure' };
/** Issue 36, build 4: the embedded database carries 10,000 agents with p99 < 250 ms as they see it (and 0 failed, the errors column). */
const TARGET_PGLITE_P99_MS: Target = { op: '<', value: 250, of: 'figure' };
const TARGET_CPU_PERCENT: Target = { op: '<', value: 25, of: 'figure' };
const TARGET_SCAVENGES: Target = { op: '≤', value: 3 };

interface Pair {
  bare: FleetFigures;
  rmm: FleetFigures;
}

function settingsFrom(env: NodeJS.ProcessEnv): FleetSettings & { runs: number } {
  return {
    agents: Math.round(positiveNumber(env, 'BENCH_FLEET_AGENTS', 10_000)),
    intervalMs: positiveNumber(env, 'BENCH_FLEET_INTERVAL_S', 60) * 1000,
    warmupMs: positiveNumber(env, 'BENCH_FLEET_WARMUP_S', 30) * 1000,
    measureMs: positiveNumber(env, 'BENCH_FLEET_MEASURE_S', 60) * 1000,
    runs: Math.round(positiveNumber(env, 'BENCH_FLEET_RUNS', 1)),
    serverFlags: nodeFlags(env, 'BENCH_FLEET_SERVER_FLAGS'),
  };
}

/** Median of the measured values (a failed run gives none); NaN when no run gave one. */
const medianOf = (values: number[]) => median(values.filter(Number.isFinite));
const scavengeMs = (f: FleetFigures) => f.serverScavenges.pauseMs;
/** Build 5's condition for one run. */
const runMeetsBuild5 = (p: Pair) => meets(p.rmm.serverP99Ms, TARGET_P99_MS) && meets(scavengeMs(p.rmm) / scavengeMs(p.bare), TARGET_SCAVENGES);

function errorsNote(pairs: Pair[]): string {
  const side = (f: FleetFigures) => `${f.startFailed} while starting, ${f.failed} measured`;
  const failures = pairs.flatMap((p) => [p.bare.failure, p.rmm.failure]).filter(Boolean);
  return (
    pairs.map((p, i) => `run ${i + 1}: failed heartbeats real ${side(p.rmm)}, bare ${side(p.bare)}`).join('; ') +
    (failures.length ? `. FAILED: ${failures.join('; ')}` : '')
  );
}

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const s = settingsFrom(env);
  const backend = (await backendsFrom(env))[0]!;
  const pairs: Pair[] = [];
  for (let i = 1; i <= s.runs; i++) {
    const runLog = (m: string) => log(`run ${i}/${s.runs}, ${m}`);
    const bare = await measureServer('bare', backend, s, runLog);
    const rmm = await measureServer('rmm', backend, s, runLog);
    pairs.push({ bare, rmm });
  }
  const agents = `${s.agents} agents`;
  const flags = s.serverFlags.length ? ` (both servers: ${s.serverFlags.join(' ')})` : '';
  const errors = pairs.reduce((n, p) => n + p.rmm.failed + p.rmm.startFailed + p.bare.failed + p.bare.startFailed, 0);
  const base = { benchmark: name, backend, errors };
  /** A row of medians over the runs, its ratio the median of the pairs' ratios. */
  const row = (setting: string, of: (f: FleetFigures) => number, rest: Omit<BenchRow, 'benchmark' | 'backend' | 'setting' | 'figure' | 'baseline'>): BenchRow => {
    const ratios = pairs.map((p) => of(p.rmm) / of(p.bare));
    const each = s.runs > 1 ? ` Pairs' ratios ${ratios.map((r) => r.toFixed(2)).join(' / ')}.` : '';
    return {
      ...base,
      setting: `${agents}, ${setting}`,
      figure: medianOf(pairs.map((p) => of(p.rmm))),
      baseline: medianOf(pairs.map((p) => of(p.bare))),
      ratio: medianOf(ratios),
      ...rest,
      note: `${rest.note ?? ''}${each}`,
    };
  };
  const allHeartbeats = (f: FleetFigures) =>
    `${f.heartbeats} heartbeats, ${f.connected} connected at the end, longest event-loop delay ${f.serverLoopMaxMs.toFixed(0)} ms in the server, ${f.fleetLoopMaxMs.toFixed(0)} ms in the fleet`;
  const last = pairs[pairs.length - 1]!;
  const rows: BenchRow[] = [
    row('idle memory', (f) => f.memoryPerAgentKiB, {
      unit: 'KiB/agent',
      baselineLabel: 'bare ws KiB/socket',
      better: 'lower',
      target: TARGET_MEMORY,
      note:
        `B4. V8 heap + external after a full GC; resident memory ${last.rmm.rssPerAgentKiB.toFixed(1)} KiB/agent (bare ${last.bare.rssPerAgentKiB.toFixed(1)}) in the last run. ` +
        `${errorsNote(pairs)}.`,
    }),
    row('1 heartbeat/min, p99 as the agents see it', (f) => f.p99Ms, {
      unit: 'ms',
      baselineLabel: 'bare server p99 ms',
      better: 'lower',
      target: backend === 'pglite' ? TARGET_PGLITE_P99_MS : TARGET_P99_MS,
      p50Ms: medianOf(pairs.map((p) => p.rmm.p50Ms)),
      p99Ms: medianOf(pairs.map((p) => p.rmm.p99Ms)),
      note:
        `B7, over ${s.measureMs / 1000} s after all agents connected and ${s.warmupMs / 1000} s more; includes the fleet process's own stalls. ` +
        `Last run: ${allHeartbeats(last.rmm)}; bare: ${allHeartbeats(last.bare)}, p50 ${last.bare.p50Ms.toFixed(1)} ms.`,
    }),
    row('1 heartbeat/min, p99 in the server', (f) => f.serverP99Ms, {
      unit: 'ms',
      baselineLabel: 'bare server p99 ms',
      better: 'lower',
      target: TARGET_P99_MS,
      p99Ms: medianOf(pairs.map((p) => p.rmm.serverP99Ms)),
      note: 'B7 without the fleet process: from the request headers to the answer, measured inside the server.',
    }),
    row(`1 heartbeat/min, server CPU${flags}`, (f) => f.cpuPercent, {
      unit: '% of a core',
      baselineLabel: 'bare server % of a core',
      better: 'lower',
      target: TARGET_CPU_PERCENT,
      note: `B7. Event loop busy ${last.rmm.eluPercent.toFixed(1)} % (bare ${last.bare.eluPercent.toFixed(1)} %) in the last run.`,
    }),
    row('1 heartbeat/min, server CPU per heartbeat', (f) => f.cpuUsPerHeartbeat, {
      unit: 'µs/heartbeat',
      baselineLabel: 'bare server µs/heartbeat',
      better: 'lower',
      note: `All the server's CPU in the minute (pings, timers and collections included) ÷ heartbeats it answered (last run: ${last.rmm.serverHeartbeats}, bare ${last.bare.serverHeartbeats}); no target.`,
    }),
    row('1 heartbeat/min, scavenge time in the minute', scavengeMs, {
      unit: 'ms',
      baselineLabel: 'bare server scavenge ms',
      better: 'lower',
      target: TARGET_SCAVENGES,
      note:
        `The real server runs with its production Node flags (${SERVER_NODE_FLAGS.join(' ')}), the bare stand-in with Node's defaults. ` +
        `Collections in the minute, each run: ${pairs.map((p, i) => `${i + 1}: ${gcNote(p.rmm)} (bare: ${gcNote(p.bare)})`).join('; ')}.`,
    }),
  ];
  if (s.runs > 1) rows.push(...build5Rows(pairs, { ...base, setting: agents }));
  return rows;
}

/** Issue 36 build 5: a row per run (p99 in the server, scavenges against bare) and the verdict over all runs. */
function build5Rows(pairs: Pair[], base: Pick<BenchRow, 'benchmark' | 'backend' | 'setting' | 'errors'>): BenchRow[] {
  const rows: BenchRow[] = pairs.flatMap((p, i) => [
    {
      ...base,
      setting: `${base.setting}, run ${i + 1}: p99 in the server`,
      figure: p.rmm.serverP99Ms,
      unit: 'ms',
      baseline: p.bare.serverP99Ms,
      baselineLabel: 'bare server p99 ms',
      better: 'lower' as const,
      target: TARGET_P99_MS,
      errors: p.rmm.failed + p.rmm.startFailed + p.bare.failed + p.bare.startFailed,
      note: p.rmm.failure ?? p.bare.failure ?? `p99 as the agents see it ${p.rmm.p99Ms.toFixed(1)} ms (bare ${p.bare.p99Ms.toFixed(1)}); CPU ${p.rmm.cpuPercent.toFixed(1)} % of a core`,
    },
    {
      ...base,
      setting: `${base.setting}, run ${i + 1}: scavenge time`,
      figure: scavengeMs(p.rmm),
      unit: 'ms',
      baseline: scavengeMs(p.bare),
      baselineLabel: 'bare server scavenge ms',
      better: 'lower' as const,
      target: TARGET_SCAVENGES,
      errors: p.rmm.failed + p.rmm.startFailed + p.bare.failed + p.bare.startFailed,
      note: `${gcNote(p.rmm)} (bare: ${gcNote(p.bare)})`,
    },
  ]);
  const met = pairs.filter(runMeetsBuild5).length;
  rows.push({
    ...base,
    setting: `${base.setting}, runs in a row meeting p99 in the server < 50 ms and scavenges ≤ 3× bare`,
    figure: met,
    unit: 'runs',
    baseline: pairs.length,
    baselineLabel: 'runs',
    better: 'higher',
    target: { op: '≥', value: 1 },
    note: `issue 36 build 5: runs meeting both: ${pairs.map((p, i) => `${i + 1} ${runMeetsBuild5(p) ? '✔' : '✘'}`).join(', ')}`,
  });
  return rows;
}

runWhenMain(import.meta.url, () => run());
