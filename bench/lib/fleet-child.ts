// The simulated fleet of the fleet benchmarks, in a process of its own (forked by fleet-scale.ts): N
// reference agents (src/fleet) against one server, with no outages, so every agent stays connected.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Fleet, type FleetStats } from '../../src/fleet/fleet.js';
import { serveRpcWhenForked } from './child-rpc.js';

export interface FleetStart {
  serverUrl: string;
  apiKey: string;
  agents: number;
  intervalMs: number;
  /** Agent names' prefix (default `sim`): a second fleet on the same server needs its own, or it adopts the first one's agents. */
  namePrefix?: string;
  /** Starts are spread over this window (default: one interval). */
  startSpreadMs?: number;
  /**
   * The agents' state files here, kept after stop (default: a temporary directory, removed): a fleet
   * started again on it with the same prefix is the same agents, not new ones registering.
   */
  stateDir?: string;
}

let fleet: Fleet | undefined;
/** The temporary state directory this child made (and removes at stop); none when the parent gave one. */
let stateDir: string | undefined;
let starting: Promise<void> | undefined;
// The fleet's own event-loop delays are part of every answer time it measures; reported beside them.
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();

serveRpcWhenForked({
  /** Begins starting the agents (spread over one interval) and returns at once; poll `stats`. */
  start: async (params: FleetStart) => {
    if (!params.stateDir) stateDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-bench-fleet-'));
    fleet = new Fleet({ ...params, stateDir: params.stateDir ?? stateDir!, outageEveryMs: 0 });
    starting = fleet.start();
    starting.catch(() => undefined);
  },
  /** The fleet's counters, its resident memory and its CPU so far (user + system, ms: what simulating costs). */
  stats: (): FleetStats & { rss: number; cpuMs: number } => {
    const { user, system } = process.cpuUsage();
    return { ...fleet!.stats, rss: process.memoryUsage().rss, cpuMs: (user + system) / 1000 };
  },
  /** Answer times since the previous call, and the fleet's own worst event-loop delay in that time. */
  latencies: () => {
    const figures = { latencies: fleet!.takeLatencies(), loopDelayMaxMs: loopDelay.max / 1e6 };
    loopDelay.reset();
    return figures;
  },
  /** How many agents accepted a check set at `since` (ms since the epoch) or later, and when the last did. */
  checkSetsSince: (since: number) => fleet!.checkSetsSince(since),
  stop: async () => {
    await fleet?.stop();
    await starting?.catch(() => undefined);
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
  },
});
