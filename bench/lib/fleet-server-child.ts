// The server side of the fleet benchmarks, in a process of its own (forked by fleet-scale.ts,
// socket-storm.ts and heartbeat-ingest.ts): the real RMM server on a fresh database, or the bare stand-in.
// It reports its own memory (after a full garbage collection; the process runs with --expose-gc) and
// CPU, so nothing of the fleet or the load is counted.
import { constants, monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import type { Server as HttpServer } from 'node:http';
import { sql } from 'kysely';
import type { DbHandle } from '../../src/db/create-db.js';
import { percentiles } from './backends.js';
import { openBackend } from './backends.js';
import { startBareAgentServer } from './bare-agent-server.js';
import { serveRpcWhenForked } from './child-rpc.js';
import type { Backend } from './databases.js';
import { readBackendTicks } from './pg-backend-cpu.js';
import { productionLog, startRmmServer } from './servers.js';

export type ServerKind = 'rmm' | 'bare';

export interface StartedServer {
  url: string;
  apiKey: string;
  /** Where the data lives, for the log. */
  location: string;
  /** A key with `write` permission and no customer scope (server-wide routes such as check policies), when asked for. */
  operatorKey?: string;
}

export interface MemorySample {
  rss: number;
  heapUsed: number;
  external: number;
}

export interface CpuSample {
  /** User + system CPU of the whole process so far, in ms. */
  cpuMs: number;
  atMs: number;
  elu: ReturnType<typeof performance.eventLoopUtilization>;
}

/** Garbage collections of one kind: how many, and their pauses added up. */
export interface GcTally {
  count: number;
  pauseMs: number;
}

export interface LoopDelay {
  p99Ms: number;
  maxMs: number;
  /** Heartbeat requests in the server, from their headers in to their answer out. */
  heartbeatP99Ms: number;
  /** Heartbeats the server answered in the time (for CPU per heartbeat). */
  heartbeats: number;
  /** Young-generation collections (scavenges). */
  scavenges: GcTally;
  /** Pauses of full collections: their incremental marking steps and their final pauses. */
  fullGcs: GcTally;
}

let close: (() => Promise<void>) | undefined;
let database: DbHandle | undefined;
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
let heartbeatMs: number[] = [];
// Collections, since they set the tail: promoted garbage once made scavenges several times longer at 10,000
// agents (bench/README.md, 2026-11-24), which showed only as a worse p99.
const emptyTally = (): GcTally => ({ count: 0, pauseMs: 0 });
let gcs = { scavenges: emptyTally(), fullGcs: emptyTally() };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_WEAKCB) continue;
    const tally = kind === constants.NODE_PERFORMANCE_GC_MINOR ? gcs.scavenges : gcs.fullGcs;
    tally.count++;
    tally.pauseMs += entry.duration;
  }
}).observe({ entryTypes: ['gc'] });

/** Times every heartbeat inside the server, beside the app's own request listener. */
function timeHeartbeats(server: HttpServer): void {
  server.on('request', (request, response) => {
    if (!request.url?.startsWith('/api/v1/agent/heartbeat')) return;
    const started = performance.now();
    response.once('finish', () => heartbeatMs.push(performance.now() - started));
  });
}

export interface StartParams {
  kind: ServerKind;
  backend: Backend;
  /** Agents registered before the server answers (none by default: the fleet registers its own). */
  agentIds?: string[];
  /** The real server's log level (silent by default); its lines go to /dev/null, formatted and written all the same. */
  logLevel?: string;
  /** Also create an operator key (the real server only). */
  operatorKey?: boolean;
}

async function start(params: StartParams): Promise<StartedServer> {
  if (params.kind === 'bare') {
    const bare = await startBareAgentServer();
    timeHeartbeats(bare.httpServer);
    close = () => bare.close();
    return { url: bare.url, apiKey: bare.apiKey, location: 'no database' };
  }
  const db: DbHandle | string = await openBackend(params.backend, process.env);
  if (typeof db === 'string') throw new Error(db);
  const server = await startRmmServer(db, params.agentIds ?? [], { ...(params.logLevel ? { ...productionLog(), logLevel: params.logLevel } : {}), ...(params.operatorKey ? { operatorKey: true } : {}) });
  if (!server) {
    await db.close();
    throw new Error('this checkout has no agent endpoints');
  }
  timeHeartbeats(server.httpServer);
  database = db;
  close = async () => {
    database = undefined;
    await server.close();
    await db.close();
  };
  return { url: server.url, apiKey: server.apiKey, location: db.location, ...(server.operatorKey ? { operatorKey: server.operatorKey } : {}) };
}

function memory(): MemorySample {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  gc();
  gc();
  const { rss, heapUsed, external } = process.memoryUsage();
  return { rss, heapUsed, external };
}

function cpu(): CpuSample {
  const { user, system } = process.cpuUsage();
  return { cpuMs: (user + system) / 1000, atMs: performance.now(), elu: performance.eventLoopUtilization() };
}

/** Since the previous call: event-loop delay (what every request waiting then waited extra), heartbeat times and collections. */
function delays(): LoopDelay {
  const figures = { p99Ms: loopDelay.percentile(99) / 1e6, maxMs: loopDelay.max / 1e6, heartbeatP99Ms: percentiles(heartbeatMs).p99, heartbeats: heartbeatMs.length, ...gcs };
  loopDelay.reset();
  heartbeatMs = [];
  gcs = { scavenges: emptyTally(), fullGcs: emptyTally() };
  return figures;
}

/** Metric samples stored so far: proof that a heartbeat load wrote them (0 for the bare stand-in). */
async function storedSamples(): Promise<number> {
  if (!database) return 0;
  const { rows } = await sql<{ n: number }>`select coalesce(sum(cardinality(vals)), 0)::int8 as n from metric_points`.execute(database.db);
  return Number(rows[0]?.n ?? 0);
}

/** CPU ticks of each PostgreSQL backend on the server's database (pairs, for the IPC channel); null on PGlite. */
async function backendTicks(): Promise<Array<[number, number]> | null> {
  if (!database || database.dialect !== 'postgres') return null;
  const ticks = await readBackendTicks(database.db);
  return ticks ? [...ticks] : null;
}

serveRpcWhenForked({
  start,
  memory,
  cpu,
  delays,
  storedSamples,
  backendTicks,
  stop: async () => {
    await close?.();
    close = undefined;
  },
});
