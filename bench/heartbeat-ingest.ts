// Heartbeat ingest: how many agent heartbeats per second the real server accepts, and at what latency,
// on PGlite (in memory) and on PostgreSQL. Heartbeats are the server's steady write load (every agent,
// every interval, a ~30 KB document stored byte for byte plus metric samples), so this is the number
// that sizes a deployment. N concurrent clients (a forked load process, keep-alive connections, each
// cycling over its own agents) post the padded FreeBSD fixture; the same load against a bare Fastify
// route that only parses the same body, in the same process and run, is the baseline. The ratio
// (heartbeats/s ÷ baseline req/s) is what compares across machines.
// Issue target on PostgreSQL: ≥ 1,500 heartbeats/s and ≥ 0.4 of the baseline. Measured, never asserted.
//
// Environment: BENCH_CONCURRENCY (clients, comma list, default 32,64), BENCH_AGENTS (500),
// BENCH_WARMUP_S (4), BENCH_DURATION_S (8), BENCH_BODY_BYTES (30720), BENCH_BACKENDS (PostgreSQL when it answers, else pglite),
// BENCH_DATABASE_URL (PostgreSQL admin URL, default postgres://postgres@127.0.0.1:5432/postgres; `off`
// skips), BENCH_FIXTURE (heartbeat JSON, default ../shared/fixtures/heartbeat-freebsd.json).
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { DbHandle } from '../src/db/create-db.js';
import { backendsFrom, openBackend, positiveNumber } from './lib/backends.js';
import type { Backend } from './lib/databases.js';
import { DEFAULT_FIXTURE } from './lib/heartbeat-body.js';
import { measure, type LoadRequest, type Measurement } from './lib/load.js';
import { HEARTBEAT_PATH, startBaseline, startRmmServer, type Server } from './lib/servers.js';
import { runWhenMain, type BenchRow } from './lib/table.js';

export const name = 'heartbeat-ingest';

interface Settings {
  concurrency: number[];
  agents: number;
  warmupMs: number;
  durationMs: number;
  bodyBytes: number;
  backends: Backend[];
  fixture: string;
}

async function settingsFrom(env: NodeJS.ProcessEnv): Promise<Settings> {
  const concurrency = (env.BENCH_CONCURRENCY ?? '32,64').split(',').map((s) => Number(s.trim()));
  if (concurrency.some((c) => !Number.isInteger(c) || c < 1)) throw new Error('BENCH_CONCURRENCY: positive integers');
  const agents = Math.round(positiveNumber(env, 'BENCH_AGENTS', 500));
  if (agents < Math.max(...concurrency)) throw new Error('BENCH_AGENTS must be at least the largest BENCH_CONCURRENCY');
  return {
    concurrency,
    agents,
    warmupMs: positiveNumber(env, 'BENCH_WARMUP_S', 4) * 1000,
    durationMs: positiveNumber(env, 'BENCH_DURATION_S', 8) * 1000,
    bodyBytes: Math.round(positiveNumber(env, 'BENCH_BODY_BYTES', 30 * 1024)),
    backends: await backendsFrom(env),
    fixture: env.BENCH_FIXTURE ?? DEFAULT_FIXTURE,
  };
}

const log = (message: string) => process.stderr.write(`[${name}] ${message}\n`);

function describe(m: Measurement): string {
  return (
    `${m.ratePerS.toFixed(0)}/s p50 ${m.p50Ms.toFixed(1)} ms p99 ${m.p99Ms.toFixed(1)} ms, ${m.errors} errors, ` +
    `server ELU ${m.serverElu.toFixed(2)} CPU ${m.serverCpu.toFixed(2)}, client CPU ${m.clientCpu.toFixed(2)}, ` +
    `body ${m.bodyBytes} B` +
    (m.firstError ? `, first error: ${m.firstError}` : '')
  );
}

async function load(settings: Settings, server: Server, agentIds: string[], clients: number): Promise<Measurement> {
  const request: LoadRequest = {
    url: server.url + HEARTBEAT_PATH,
    apiKey: server.apiKey,
    agentIds,
    concurrency: clients,
    warmupMs: settings.warmupMs,
    durationMs: settings.durationMs,
    fixture: settings.fixture,
    bodyBytes: settings.bodyBytes,
  };
  return measure(request);
}

/** What the run left in the database: proof that samples were written along with the heartbeats. */
async function storedSamples(db: DbHandle): Promise<number> {
  const { rows } = await sql<{ n: number }>`select coalesce(sum(cardinality(vals)), 0)::int8 as n from metric_points`.execute(db.db);
  return rows[0]?.n ?? 0;
}

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const settings = await settingsFrom(env);
  const agentIds = Array.from({ length: settings.agents }, () => randomBytes(16).toString('hex'));
  const row = (backend: string, clients: number, baselineRate: number, m?: Measurement, note?: string): BenchRow => ({
    benchmark: name,
    backend,
    setting: `${clients} clients`,
    figure: m?.ratePerS ?? Number.NaN,
    unit: 'heartbeats/s',
    baseline: baselineRate,
    baselineLabel: 'bare parse req/s',
    better: 'higher',
    p50Ms: m?.p50Ms,
    p99Ms: m?.p99Ms,
    errors: m?.errors,
    note: note ?? (m?.firstError ? `first error: ${m.firstError}` : undefined),
  });

  const rows: BenchRow[] = [];
  const baseline = new Map<number, number>();
  const bare = await startBaseline();
  try {
    for (const clients of settings.concurrency) {
      const m = await load(settings, bare, agentIds, clients);
      log(`baseline (bare parse), ${clients} clients: ${describe(m)}`);
      baseline.set(clients, m.ratePerS);
      rows.push(row('bare parse (baseline)', clients, m.ratePerS, m));
    }
  } finally {
    await bare.close();
  }

  for (const backend of settings.backends) {
    const db = await openBackend(backend, env);
    if (typeof db === 'string') {
      log(`${backend}: ${db}`);
      rows.push(row(backend, settings.concurrency[0]!, Number.NaN, undefined, db));
      continue;
    }
    try {
      log(`${backend}: ${db.location}; registering ${agentIds.length} agents`);
      const server = await startRmmServer(db, agentIds);
      if (!server) {
        const note = 'skipped: POST /api/v1/agent/heartbeat and /agent/register are not in the app yet';
        log(`${backend}: ${note}`);
        rows.push(row(backend, settings.concurrency[0]!, Number.NaN, undefined, note));
        continue;
      }
      try {
        for (const clients of settings.concurrency) {
          const m = await load(settings, server, agentIds, clients);
          log(`${backend}, ${clients} clients: ${describe(m)}`);
          rows.push(row(backend, clients, baseline.get(clients)!, m));
        }
      } finally {
        await server.close();
      }
      log(`${backend}: stored ${await storedSamples(db)} metric samples`);
    } finally {
      await db.close();
    }
  }
  return rows;
}

runWhenMain(import.meta.url, () => run());
