// Sizing (issue 62, point 3): what one agent costs the machine the bench runs on, at one heartbeat a
// minute, on each backend of BENCH_BACKENDS, and the sizing table drawn from it (agents per core and per
// GiB, disk, WAL and traffic per agent per day), printed as rows and as markdown for docs/sizing.md.
//
// For each backend: the real server (src via tsx, as every fleet bench runs it: bench/lib/fleet-server-
// child.ts, with its production Node flags and log level `info` to /dev/null) on a fresh database, in a
// process of its own; then the fleet (src/fleet: realistic mix and system data, one WebSocket each,
// starts spread over one interval) in two steps, each step's agents a process of their own
// (BENCH_CAPACITY_AGENTS, default 500 then 2,000). After each step has connected and settled, one window
// is measured: the server's CPU from its own process, PostgreSQL's backends' CPU from /proc, the
// server's RSS and V8 heap after a full collection, the bytes of its agent connections, the growth of the
// metric tables, and the WAL written. Two points give a slope (the cost of one more agent) and a fixed
// base, instead of one ratio that charges the fixed costs to each agent. A configuration backup's stored
// size is measured by storing the shared fixture's config.xml 200 times over the fleet's firewalls.
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
import { SERVER_NODE_FLAGS } from '../src/platform/node-flags.js';
import { backendsFrom, positiveNumber } from './lib/backends.js';
import { capacityRows, commitOf, failureRow, sizingMarkdown, type BackendResult, type CapacitySettings } from './lib/capacity-report.js';
import { measureWindow, type WindowFigures } from './lib/capacity-window.js';
import { forkRpc, type RpcChild } from './lib/child-rpc.js';
import type { Backend } from './lib/databases.js';
import type { FleetStart } from './lib/fleet-child.js';
import { waitUntilConnected } from './lib/fleet-measure.js';
import type { MemorySample, StartedServer, StartParams } from './lib/fleet-server-child.js';
import { runWhenMain, type BenchRow } from './lib/table.js';

export const name = 'capacity';
const log = (message: string) => process.stderr.write(`[${name}] ${message}\n`);

const SERVER_FILE = fileURLToPath(new URL('./lib/fleet-server-child.ts', import.meta.url));
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

async function measureBackend(backend: Backend, s: CapacitySettings, say: (m: string) => void): Promise<BackendResult> {
  const server = forkRpc(SERVER_FILE, ['--expose-gc', ...SERVER_NODE_FLAGS]);
  const fleets: RpcChild[] = [];
  const windows: WindowFigures[] = [];
  let startFailed = 0;
  try {
    const started = await server.call<StartedServer>('start', { kind: 'rmm', backend, logLevel: 'info' } satisfies StartParams);
    say(`listening at ${started.url}, ${started.location}`);
    await delay(1000);
    const before = await server.call<MemorySample>('memory');
    let connected = 0;
    for (const [i, agents] of s.steps.entries()) {
      const fleet = forkRpc(FLEET_FILE);
      fleets.push(fleet);
      const more = agents - connected;
      const start: FleetStart = { serverUrl: started.url, apiKey: started.apiKey, agents: more, intervalMs: s.intervalS * 1000, namePrefix: `cap${i + 1}` };
      await fleet.call('start', start);
      const stats = await waitUntilConnected(fleet, { agents: more, intervalMs: start.intervalMs, warmupMs: 0, measureMs: 0, serverFlags: [] }, (m) => say(`step ${i + 1}: ${m}`));
      startFailed += stats.heartbeatsFailed;
      connected = agents;
      await delay(s.settleS * 1000);
      const w = await measureWindow(server, fleets, agents, s.measureS, backend === 'postgres');
      say(
        `${agents} agents: ${w.heartbeats} heartbeats in ${w.seconds.toFixed(0)} s (${w.failed} failed), server CPU ${((w.serverCpuMs / w.seconds / 1000) * 100).toFixed(1)} % of a core` +
          `${w.databaseCpuMs !== undefined ? `, database ${((w.databaseCpuMs / w.seconds / 1000) * 100).toFixed(1)} %` : ''}, RSS ${(w.rssBytes / 2 ** 20).toFixed(0)} MiB, ` +
          `heap+external ${(w.heapBytes / 2 ** 20).toFixed(1)} MiB, WAL ${(w.walBytes / 2 ** 20).toFixed(1)} MiB, metric tables +${(w.metricBytes / 1024).toFixed(0)} KiB, ` +
          `in ${(w.bytesIn / 2 ** 20).toFixed(1)} MiB out ${(w.bytesOut / 2 ** 20).toFixed(1)} MiB, p99 ${w.serverP99Ms.toFixed(1)} ms in the server`,
      );
      windows.push(w);
    }
    // The windows are measured by now: a backup that cannot be stored costs its row only (the note says why).
    const content = await configFixture();
    const backup =
      content === undefined
        ? undefined
        : await server.call<{ perBackup: number; column: number; raw: number }>('backupBytes', content).catch((err: unknown) => {
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
    await server.close();
  }
}

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const s = settingsFrom(env);
  const commit = await commitOf();
  const rows: BenchRow[] = [];
  const results: BackendResult[] = [];
  for (const backend of await backendsFrom(env)) {
    const started = Date.now();
    const result = await measureBackend(backend, s, (m) => log(`${backend}: ${m}`));
    log(`${backend}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
    results.push(result);
    rows.push(...(result.failure || result.windows.length < 2 ? [failureRow(result, s)] : capacityRows(result, s)));
  }
  process.stdout.write(`\n${sizingMarkdown(results, s, commit)}\n`);
  return rows;
}

runWhenMain(import.meta.url, () => run());
