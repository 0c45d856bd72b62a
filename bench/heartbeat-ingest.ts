// B1, heartbeat ingest: how many agent heartbeats per second the real server stores, at what latency and
// at what CPU per heartbeat, on PGlite (in memory) and on PostgreSQL. Heartbeats are the server's steady
// write load (every agent, every interval, a ~30 KB document stored byte for byte plus metric samples),
// so this sizes a deployment. N concurrent clients (a forked load process, keep-alive connections, each
// cycling over its own agents) post the padded FreeBSD fixture.
//
// The server under test runs in a process of its own (bench/lib/fleet-server-child.ts) at the production
// log configuration (`info`, every line serialised and written to /dev/null), and reports its own CPU
// (user + system), so neither the load nor the harness is counted as the server's. Baseline: the same load
// against a bare Fastify route that only parses the same body (the bare stand-in, also a process of its
// own), in interleaved rounds A B A B … with the real server, both alive throughout. Each ratio is the
// median of the per-pair ratios (bare round, real round), which a slow minute of a shared machine moves
// less than it moves either side.
//
// Figures per backend and client count: heartbeats/s vs bare req/s, and the server's CPU-µs per heartbeat
// vs the bare route's per request (the CPU figure is the one two shared cores disturb least). On
// PostgreSQL the database backends' CPU per heartbeat goes to the note (on PGlite the database runs
// inside the server process and is counted in its CPU). Targets (issue 36): PostgreSQL throughput ≥ 0.45
// and CPU per heartbeat ≤ 2.5×; PGlite throughput ≥ 0.25. Measured, never asserted.
//
// Environment: BENCH_CONCURRENCY (clients, comma list, default 32,64), BENCH_AGENTS (500),
// BENCH_INGEST_ROUNDS (3 pairs per client count), BENCH_WARMUP_S (4), BENCH_DURATION_S (8),
// BENCH_BODY_BYTES (30720), BENCH_BACKENDS (PostgreSQL when it answers, else pglite), BENCH_DATABASE_URL
// (PostgreSQL admin URL, default postgres://postgres@127.0.0.1:5432/postgres; `off` skips), BENCH_FIXTURE
// (heartbeat JSON, default ../shared/fixtures/heartbeat-freebsd.json), BENCH_INGEST_SERVER_FLAGS (Node
// flags for both servers alike, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`; none by default).
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { backendsFrom, nodeFlags, positiveNumber } from './lib/backends.js';
import { SERVER_NODE_ENV, SERVER_NODE_FLAGS } from '../src/platform/node-flags.js';
import { forkRpc, type RpcChild } from './lib/child-rpc.js';
import type { Backend } from './lib/databases.js';
import type { CpuSample, ServerKind, StartParams, StartedServer } from './lib/fleet-server-child.js';
import { DEFAULT_FIXTURE } from './lib/heartbeat-body.js';
import { measure, type Measurement, type ServerSample } from './lib/load.js';
import { backendCpuMs, type BackendTicks } from './lib/pg-backend-cpu.js';
import { HEARTBEAT_PATH } from './lib/servers.js';
import { median, medianRatio } from './lib/stats.js';
import { runWhenMain, type BenchRow, type Target } from './lib/table.js';

export const name = 'heartbeat-ingest';
const log = (message: string) => process.stderr.write(`[${name}] ${message}\n`);
const SERVER_FILE = fileURLToPath(new URL('./lib/fleet-server-child.ts', import.meta.url));

/** Issue 36's targets, by backend: throughput ratio, and (PostgreSQL only) CPU per heartbeat ratio. */
const TARGETS: Record<Backend, { rate: Target; cpu?: Target }> = {
  postgres: { rate: { op: '≥', value: 0.45 }, cpu: { op: '≤', value: 2.5 } },
  pglite: { rate: { op: '≥', value: 0.25 } },
};

interface Settings {
  concurrency: number[];
  agents: number;
  rounds: number;
  warmupMs: number;
  durationMs: number;
  bodyBytes: number;
  backends: Backend[];
  fixture: string;
  /** Node flags for both servers alike (diagnostics: `--cpu-prof`, `--trace-gc`); none by default. */
  serverFlags: string[];
}

async function settingsFrom(env: NodeJS.ProcessEnv): Promise<Settings> {
  const concurrency = (env.BENCH_CONCURRENCY ?? '32,64').split(',').map((s) => Number(s.trim()));
  if (concurrency.some((c) => !Number.isInteger(c) || c < 1)) throw new Error('BENCH_CONCURRENCY: positive integers');
  const agents = Math.round(positiveNumber(env, 'BENCH_AGENTS', 500));
  if (agents < Math.max(...concurrency)) throw new Error('BENCH_AGENTS must be at least the largest BENCH_CONCURRENCY');
  return {
    concurrency,
    agents,
    rounds: Math.round(positiveNumber(env, 'BENCH_INGEST_ROUNDS', 3)),
    warmupMs: positiveNumber(env, 'BENCH_WARMUP_S', 4) * 1000,
    durationMs: positiveNumber(env, 'BENCH_DURATION_S', 8) * 1000,
    bodyBytes: Math.round(positiveNumber(env, 'BENCH_BODY_BYTES', 30 * 1024)),
    backends: await backendsFrom(env),
    fixture: env.BENCH_FIXTURE ?? DEFAULT_FIXTURE,
    serverFlags: nodeFlags(env, 'BENCH_INGEST_SERVER_FLAGS'),
  };
}

/** A server under test in its own process. */
interface Running {
  rpc: RpcChild;
  started: StartedServer;
}

/** One load round: the client's figures and the server's own CPU; or why the round failed. */
type Outcome = { m: Measurement; databaseUsPerHb: number | undefined } | { failed: string };

const message = (err: unknown) => (err instanceof Error ? err.message.split('\n')[0]! : String(err));
const f = (n: number | undefined, digits = 0) => (n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(digits));

async function startServer(kind: ServerKind, backend: Backend, agentIds: string[], serverFlags: string[]): Promise<Running | string> {
  // The real server with the Node flags it runs with in production (the bare stand-in with Node's own).
  const rpc = forkRpc(SERVER_FILE, [...(kind === 'rmm' ? SERVER_NODE_FLAGS : []), ...serverFlags], kind === 'rmm' ? SERVER_NODE_ENV : {});
  try {
    const params: StartParams = kind === 'bare' ? { kind, backend } : { kind, backend, agentIds, logLevel: 'info' };
    return { rpc, started: await rpc.call<StartedServer>('start', params) };
  } catch (err) {
    await rpc.close().catch(() => undefined);
    return message(err);
  }
}

async function round(server: Running, s: Settings, agentIds: string[], clients: number): Promise<Outcome> {
  // The database backends' ticks at each end of the window (PostgreSQL only), read beside the server's CPU.
  const ticks: Array<BackendTicks | undefined> = [];
  const sample = async (): Promise<ServerSample> => {
    const [cpu, backends] = await Promise.all([server.rpc.call<CpuSample>('cpu'), server.rpc.call<Array<[number, number]> | null>('backendTicks')]);
    ticks.push(backends ? new Map(backends) : undefined);
    return { cpuMs: cpu.cpuMs, elu: cpu.elu };
  };
  try {
    const m = await measure(
      {
        url: server.started.url + HEARTBEAT_PATH,
        apiKey: server.started.apiKey,
        agentIds,
        concurrency: clients,
        warmupMs: s.warmupMs,
        durationMs: s.durationMs,
        fixture: s.fixture,
        bodyBytes: s.bodyBytes,
      },
      sample,
    );
    const database = backendCpuMs(ticks[0], ticks[1]);
    return { m, databaseUsPerHb: database === undefined ? undefined : (database * 1000) / m.completed };
  } catch (err) {
    return { failed: message(err) };
  }
}

function describe(o: Outcome): string {
  if ('failed' in o) return `failed: ${o.failed}`;
  const { m } = o;
  return (
    `${f(m.ratePerS)}/s p50 ${f(m.p50Ms, 1)} ms p99 ${f(m.p99Ms, 1)} ms, ${m.errors} errors, server CPU ${f(m.serverCpuUsPerRequest)} µs/request ` +
    `(${f(m.serverCpu, 2)} cores, ELU ${f(m.serverElu, 2)})${o.databaseUsPerHb === undefined ? '' : `, database ${f(o.databaseUsPerHb)} µs/request`}, ` +
    `client CPU ${f(m.clientCpu, 2)}, body ${m.bodyBytes} B` +
    (m.firstError ? `, first error: ${m.firstError}` : '')
  );
}

/** The rows of one backend and client count from its pairs of rounds (bare, real). */
function rowsOf(backend: Backend, clients: number, pairs: Array<{ bare: Outcome; real: Outcome }>, stored: string): BenchRow[] {
  const ok = pairs.filter((p): p is { bare: Extract<Outcome, { m: Measurement }>; real: Extract<Outcome, { m: Measurement }> } => 'm' in p.bare && 'm' in p.real);
  const bare = ok.map((p) => p.bare.m);
  const real = ok.map((p) => p.real.m);
  const measured = (list: Outcome[]) => list.flatMap((o) => ('m' in o ? [o.m] : []));
  const errors = (list: Outcome[]) => measured(list).reduce((t, m) => t + m.errors, 0);
  const firstError = measured(pairs.map((p) => p.real)).find((m) => m.firstError)?.firstError ?? measured(pairs.map((p) => p.bare)).find((m) => m.firstError)?.firstError;
  const failedRounds = pairs.flatMap((p, i) => [p.bare, p.real].flatMap((o, j) => ('failed' in o ? [`pair ${i + 1} ${j ? 'real' : 'bare'}: ${o.failed}`] : [])));
  const pick = (list: Measurement[], get: (m: Measurement) => number) => median(list.map(get));
  const rateRatios = real.map((m, i) => m.ratePerS / bare[i]!.ratePerS);
  const cpuRatios = real.map((m, i) => m.serverCpuUsPerRequest / bare[i]!.serverCpuUsPerRequest);
  const databaseUs = ok.flatMap((p) => (p.real.databaseUsPerHb === undefined ? [] : [p.real.databaseUsPerHb]));
  const trouble =
    `Errors: real ${errors(pairs.map((p) => p.real))}, bare ${errors(pairs.map((p) => p.bare))}${firstError ? ` (first: ${firstError})` : ''}` +
    (failedRounds.length ? `; rounds failed: ${failedRounds.join('; ')}` : '');
  const base = { benchmark: name, backend, setting: `${clients} clients, ${ok.length} of ${pairs.length} pairs`, errors: errors(pairs.map((p) => p.real)) + errors(pairs.map((p) => p.bare)) };
  return [
    {
      ...base,
      figure: pick(real, (m) => m.ratePerS),
      unit: 'heartbeats/s',
      baseline: pick(bare, (m) => m.ratePerS),
      baselineLabel: 'bare parse req/s',
      better: 'higher',
      ratio: medianRatio(real.map((m) => m.ratePerS), bare.map((m) => m.ratePerS)),
      target: TARGETS[backend].rate,
      p50Ms: pick(real, (m) => m.p50Ms),
      p99Ms: pick(real, (m) => m.p99Ms),
      note:
        `ratio = median of the pairs' ratios ${rateRatios.map((r) => r.toFixed(2)).join(' / ')}; bare p50 ${f(pick(bare, (m) => m.p50Ms), 1)} ms, ` +
        `p99 ${f(pick(bare, (m) => m.p99Ms), 1)} ms. ${trouble}. ${stored}`,
    },
    {
      ...base,
      figure: pick(real, (m) => m.serverCpuUsPerRequest),
      unit: 'server CPU µs/heartbeat',
      baseline: pick(bare, (m) => m.serverCpuUsPerRequest),
      baselineLabel: 'bare parse CPU µs/req',
      better: 'lower',
      ratio: medianRatio(real.map((m) => m.serverCpuUsPerRequest), bare.map((m) => m.serverCpuUsPerRequest)),
      ...(TARGETS[backend].cpu ? { target: TARGETS[backend].cpu } : {}),
      note:
        `the server process's user + system CPU over the window ÷ heartbeats answered in it; pairs ${cpuRatios.map((r) => r.toFixed(2)).join(' / ')}; ` +
        `server busy ${f(pick(real, (m) => m.serverCpu), 2)} cores (bare ${f(pick(bare, (m) => m.serverCpu), 2)}). ` +
        (backend === 'postgres'
          ? `PostgreSQL's own backends, not counted above: ${databaseUs.length ? `${f(median(databaseUs))} µs/heartbeat` : 'not readable from /proc'}`
          : 'PGlite runs inside the server process: its CPU is counted above; no CPU target on PGlite'),
    },
  ];
}

/** A row per client count that says why a backend was not measured. */
function failedStart(backend: Backend, s: Settings, why: string): BenchRow[] {
  return s.concurrency.map((clients) => ({
    benchmark: name,
    backend,
    setting: `${clients} clients`,
    figure: Number.NaN,
    unit: 'heartbeats/s',
    baseline: Number.NaN,
    baselineLabel: 'bare parse req/s',
    better: 'higher' as const,
    target: TARGETS[backend].rate,
    note: `not measured: ${why}`,
  }));
}

async function runBackend(backend: Backend, s: Settings): Promise<BenchRow[]> {
  const agentIds = Array.from({ length: s.agents }, () => randomBytes(16).toString('hex'));
  log(`${backend}: starting the bare stand-in and the real server (registering ${s.agents} agents)`);
  const [bare, real] = await Promise.all([startServer('bare', backend, agentIds, s.serverFlags), startServer('rmm', backend, agentIds, s.serverFlags)]);
  try {
    if (typeof bare === 'string' || typeof real === 'string') {
      const why = [typeof bare === 'string' ? `the bare stand-in failed to start: ${bare}` : '', typeof real === 'string' ? `the real server failed to start: ${real}` : ''].filter(Boolean).join('; ');
      log(`${backend}: ${why}`);
      return failedStart(backend, s, why);
    }
    log(`${backend}: ${real.started.location}`);
    const pairs = new Map(s.concurrency.map((c) => [c, [] as Array<{ bare: Outcome; real: Outcome }>]));
    for (let i = 0; i < s.rounds; i++) {
      for (const clients of s.concurrency) {
        const b = await round(bare, s, agentIds, clients);
        log(`${backend}, ${clients} clients, pair ${i + 1}, bare: ${describe(b)}`);
        const r = await round(real, s, agentIds, clients);
        log(`${backend}, ${clients} clients, pair ${i + 1}, real: ${describe(r)}`);
        pairs.get(clients)!.push({ bare: b, real: r });
      }
    }
    const stored = await real.rpc.call<number>('storedSamples').then((n) => `Metric samples stored: ${n}.`, (err: unknown) => `Stored samples unknown: ${message(err)}.`);
    log(`${backend}: ${stored}`);
    const flags = s.serverFlags.length ? ` (both servers: ${s.serverFlags.join(' ')})` : '';
    return s.concurrency.flatMap((clients) => rowsOf(backend, clients, pairs.get(clients)!, stored)).map((row) => ({ ...row, setting: row.setting + flags }));
  } finally {
    for (const side of [bare, real]) if (typeof side !== 'string') await side.rpc.close();
  }
}

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const s = await settingsFrom(env);
  const rows: BenchRow[] = [];
  for (const backend of s.backends) rows.push(...(await runBackend(backend, s)));
  return rows;
}

runWhenMain(import.meta.url, () => run());
