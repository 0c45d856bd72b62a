// Sizing (issue 62, point 3): what one agent costs the machine the bench runs on, at one heartbeat a
// minute, on each backend of BENCH_BACKENDS, and the sizing table drawn from it (agents per core and per
// GiB, disk, WAL and traffic per agent per day), printed as rows and as markdown for docs/sizing.md.
//
// For each backend: the server as users run it (bench/lib/capacity-server.ts: the built dist/src/main.js
// with its production Node flags, log level `info`, in a process of its own) on a fresh database: a new
// PGlite data directory with PGlite's default buffer pool, or a new PostgreSQL database. Until
// 2026-11-30 it was the sources under tsx with a 128 MB pool, whose fixed RSS (477–501 MiB) was not what
// users run. Then the fleet (src/fleet: realistic mix and system data, one WebSocket each, starts spread
// over one interval) in two steps, each step's agents a process of their own (BENCH_CAPACITY_AGENTS,
// default 500 then 2,000). After each step has connected and settled, one window is measured, all of it
// from outside the server: its CPU and RSS from /proc, PostgreSQL's backends' CPU from /proc, the V8 heap
// (as it stands: no forced collection) and the heartbeats from its Prometheus endpoint, the bytes of the
// agents' connections at a relay in front of it, the growth of the metric tables and the WAL written
// (PostgreSQL: a connection of the bench's; PGlite: its files). Two points give a slope (the cost of one
// more agent) and a fixed base, instead of one ratio that charges the fixed costs to each agent. A
// configuration backup's stored size is measured by storing the shared fixture's config.xml 200 times
// over the fleet's firewalls, after the windows (on PGlite with the server stopped, since it holds the
// database alone; also when its metric samples are counted).
//
// The baseline of each row is the same figure taken the plain way in the same run: all of it ÷ the
// agents at the larger step; its ratio to the slope shows how much of the plain figure is fixed cost.
//
// Environment: BENCH_CAPACITY_AGENTS (500,2000), BENCH_CAPACITY_INTERVAL_S (60), BENCH_CAPACITY_SETTLE_S
// (20), BENCH_CAPACITY_MEASURE_S (120), BENCH_CAPACITY_HEADROOM (0.5 of a core), BENCH_CAPACITY_BACKUPS_PER_DAY
// (1), BENCH_BACKENDS, BENCH_DATABASE_URL. Measured, never asserted.
import { readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { DbHandle } from '../src/db/create-db.js';
import { backendsFrom, positiveNumber } from './lib/backends.js';
import { capacityRows, commitOf, failureRow, sizingMarkdown, type BackendResult, type CapacitySettings } from './lib/capacity-report.js';
import { backupBytes } from './lib/capacity-probes.js';
import { startCapacityServer, type CapacityServer } from './lib/capacity-server.js';
import { measureWindow, type WindowFigures } from './lib/capacity-window.js';
import { forkRpc, type RpcChild } from './lib/child-rpc.js';
import type { Backend } from './lib/databases.js';
import type { FleetStart } from './lib/fleet-child.js';
import { waitUntilConnected } from './lib/fleet-measure.js';
import { runWhenMain, type BenchRow } from './lib/table.js';

export const name = 'capacity';
const log = (message: string) => process.stderr.write(`[${name}] ${message}\n`);

const FLEET_FILE = fileURLToPath(new URL('./lib/fleet-child.ts', import.meta.url));
/** The shared fixtures' OPNsense configuration: what a firewall's backup holds. */
const CONFIG_FIXTURE = fileURLToPath(new URL('../../shared/fixtures/opnsense-config.xml', import.meta.url));

export function settingsFrom(env: NodeJS.ProcessEnv): CapacitySettings {
  const steps = (env.BENCH_CAPACITY_AGENTS ?? '500,2000').split(',').map((s) => Math.round(Number(s.trim())));
  if (steps.length !== 2 || !steps.every((n) => Number.isFinite(n) && n > 0) || steps[0]! >= steps[1]!) {
    throw new Error(`BENCH_CAPACITY_AGENTS must be two fleet sizes, the smaller first (e.g. 500,2000), got ${env.BENCH_CAPACITY_AGENTS}`);
  }
  return {
    steps: steps as [number, number],
    intervalS: positiveNumber(env, 'BENCH_CAPACITY_INTERVAL_S', 60),
    settleS: positiveNumber(env, 'BENCH_CAPACITY_SETTLE_S', 20),
    measureS: positiveNumber(env, 'BENCH_CAPACITY_MEASURE_S', 120),
    headroom: positiveNumber(env, 'BENCH_CAPACITY_HEADROOM', 0.5),
    backupsPerDay: positiveNumber(env, 'BENCH_CAPACITY_BACKUPS_PER_DAY', 1),
  };
}

async function configFixture(): Promise<string | undefined> {
  return readFile(CONFIG_FIXTURE, 'utf8').catch(() => undefined);
}

async function measureBackend(backend: Backend, s: CapacitySettings, env: NodeJS.ProcessEnv, say: (m: string) => void): Promise<BackendResult> {
  let server: CapacityServer | undefined;
  const fleets: RpcChild[] = [];
  const windows: WindowFigures[] = [];
  let startFailed = 0;
  try {
    server = await startCapacityServer(backend, env);
    say(`listening (built server), the fleet through ${server.url}, ${server.location}`);
    await delay(1000);
    const before = { rss: await server.rssBytes(), heapBytes: (await server.scrape()).heapBytes };
    let connected = 0;
    for (const [i, agents] of s.steps.entries()) {
      const fleet = forkRpc(FLEET_FILE);
      fleets.push(fleet);
      const more = agents - connected;
      const start: FleetStart = { serverUrl: server.url, apiKey: server.apiKey, agents: more, intervalMs: s.intervalS * 1000, namePrefix: `cap${i + 1}` };
      await fleet.call('start', start);
      const stats = await waitUntilConnected(fleet, { agents: more, intervalMs: start.intervalMs, warmupMs: 0, measureMs: 0, serverFlags: [] }, (m) => say(`step ${i + 1}: ${m}`));
      startFailed += stats.heartbeatsFailed;
      connected = agents;
      await delay(s.settleS * 1000);
      const w = await measureWindow(server, fleets, agents, s.measureS, backend === 'postgres');
      say(
        `${agents} agents: ${w.heartbeats} heartbeats in ${w.seconds.toFixed(0)} s (${w.failed} failed), server CPU ${((w.serverCpuMs / w.seconds / 1000) * 100).toFixed(1)} % of a core` +
          `${w.databaseCpuMs !== undefined ? `, database ${((w.databaseCpuMs / w.seconds / 1000) * 100).toFixed(1)} %` : ''}, RSS ${(w.rssBytes / 2 ** 20).toFixed(0)} MiB (${(w.rssRange[0] / 2 ** 20).toFixed(0)}–${(w.rssRange[1] / 2 ** 20).toFixed(0)}), ` +
          `heap+external ${(w.heapBytes / 2 ** 20).toFixed(1)} MiB, WAL ${(w.walBytes / 2 ** 20).toFixed(1)} MiB, metric tables +${(w.metricBytes / 1024).toFixed(0)} KiB, ` +
          `in ${(w.bytesIn / 2 ** 20).toFixed(1)} MiB out ${(w.bytesOut / 2 ** 20).toFixed(1)} MiB, p99 ${w.serverP99Ms.toFixed(1)} ms in the server`,
      );
      windows.push(w);
    }
    const heartbeats = (await server.scrape()).heartbeats;
    for (const fleet of fleets.splice(0)) await fleet.close(120_000);
    // The windows are measured by now: what only SQL tells (on PGlite with the server stopped) costs its row only.
    const database = await server.database();
    if (backend === 'pglite') await samplesFromTheEnd(database, windows, heartbeats, say).catch((err: unknown) => say(`metric samples not counted: ${err instanceof Error ? err.message : String(err)}`));
    const content = await configFixture();
    const backup =
      content === undefined
        ? undefined
        : await backupBytes(database, content).catch((err: unknown) => {
            say(`config backup not measured: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
            return undefined;
          });
    if (!backup) say(`config backups not measured${content === undefined ? ` (no ${CONFIG_FIXTURE})` : ''}`);
    return { backend, before, windows, startFailed, ...(backup ? { backup } : {}) };
  } catch (err) {
    const message = err instanceof Error ? err.message.split('\n')[0]! : String(err);
    say(`failed: ${message}`);
    return { backend, windows, startFailed: startFailed + ((err as { startFailed?: number }).startFailed ?? 0), failure: message };
  } finally {
    for (const fleet of fleets) await fleet.close(120_000);
    await server?.close();
  }
}

/**
 * PGlite's metric samples, which its files do not tell: all stored ÷ all heartbeats the server answered,
 * counted once the server stopped, given to each window by its heartbeats (the samples per heartbeat
 * are the fleet mix's, the same in both windows).
 */
async function samplesFromTheEnd(database: DbHandle, windows: WindowFigures[], heartbeats: number, say: (m: string) => void): Promise<void> {
  const { rows } = await sql<{ n: string }>`select coalesce(sum(cardinality(vals)), 0)::int8 as n from metric_points`.execute(database.db);
  const perHeartbeat = Number(rows[0]?.n ?? 0) / heartbeats;
  say(`${rows[0]?.n} metric samples stored over ${heartbeats} heartbeats: ${perHeartbeat.toFixed(1)} each`);
  for (const w of windows) w.samples = w.heartbeats * perHeartbeat;
}

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const s = settingsFrom(env);
  const commit = await commitOf();
  const rows: BenchRow[] = [];
  const results: BackendResult[] = [];
  for (const backend of await backendsFrom(env)) {
    const started = Date.now();
    const result = await measureBackend(backend, s, env, (m) => log(`${backend}: ${m}`));
    log(`${backend}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
    results.push(result);
    rows.push(...(result.failure || result.windows.length < 2 ? [failureRow(result, s)] : capacityRows(result, s)));
  }
  process.stdout.write(`\n${sizingMarkdown(results, s, commit)}\n`);
  return rows;
}

runWhenMain(import.meta.url, () => run());
