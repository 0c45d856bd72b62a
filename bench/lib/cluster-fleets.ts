// The simulated fleet of cluster-capacity.ts, as several fleet children (bench/lib/fleet-child.ts): one
// process holds at most `perProcess` agents (each end of a socket is a file descriptor, and the limit
// here is 20,000 a process). Steps at the same heartbeat interval add children for the added agents;
// a step at another interval restarts every child on its own state files, so the agents stay the same
// ones (their ids, their database rows) and only their interval changes.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { forkRpc, type RpcChild } from './child-rpc.js';
import type { FleetStart } from './fleet-child.js';
import { waitUntilConnected } from './fleet-measure.js';

const FLEET_FILE = fileURLToPath(new URL('./fleet-child.ts', import.meta.url));
/** A restarted child's starts are spread over at least this long: not every socket in one second. */
const MIN_SPREAD_MS = 20_000;

export interface ClusterFleets {
  readonly children: readonly RpcChild[];
  /** Brings the fleet to `sockets` agents at `intervalS` and resolves once all are connected. */
  step(sockets: number, intervalS: number, log: (m: string) => void): Promise<void>;
  /** Stops every child and removes the agents' state files. */
  close(): Promise<void>;
}

export async function clusterFleets(serverUrl: string, apiKey: string, perProcess: number): Promise<ClusterFleets> {
  const stateRoot = await mkdtemp(path.join(os.tmpdir(), 'rmm-bench-cluster-fleet-'));
  const parts: Array<{ prefix: string; agents: number }> = [];
  let children: RpcChild[] = [];
  let currentInterval: number | undefined;

  const launch = async (part: { prefix: string; agents: number }, intervalS: number, log: (m: string) => void) => {
    const child = forkRpc(FLEET_FILE);
    children.push(child);
    const start: FleetStart = {
      serverUrl,
      apiKey,
      agents: part.agents,
      intervalMs: intervalS * 1000,
      namePrefix: part.prefix,
      stateDir: path.join(stateRoot, part.prefix),
      startSpreadMs: Math.max(intervalS * 1000, MIN_SPREAD_MS),
    };
    await child.call('start', start);
    return () => waitUntilConnected(child, { agents: part.agents, intervalMs: start.startSpreadMs!, warmupMs: 0, measureMs: 0, serverFlags: [] }, (m) => log(`${part.prefix}: ${m}`));
  };

  return {
    get children() {
      return children;
    },
    async step(sockets, intervalS, log) {
      const waits: Array<() => Promise<unknown>> = [];
      if (currentInterval !== undefined && currentInterval !== intervalS) {
        log(`restarting ${children.length} fleet processes at ${intervalS} s`);
        for (const child of children) await child.close(120_000);
        children = [];
        for (const part of parts) waits.push(await launch(part, intervalS, log));
      }
      currentInterval = intervalS;
      let have = parts.reduce((t, p) => t + p.agents, 0);
      if (sockets < have) throw new Error(`steps must not shrink the fleet (${have} → ${sockets})`);
      while (have < sockets) {
        const part = { prefix: `cc${parts.length + 1}`, agents: Math.min(perProcess, sockets - have) };
        parts.push(part);
        have += part.agents;
        waits.push(await launch(part, intervalS, log));
      }
      for (const wait of waits) await wait();
    },
    async close() {
      for (const child of children) await child.close(120_000);
      children = [];
      await rm(stateRoot, { recursive: true, force: true });
    },
  };
}
