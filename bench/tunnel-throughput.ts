// B3, tunnel throughput and relay cost: MiB/s through a TCP tunnel of the real server (client → proxy port
// → the agent's WebSocket → the project's reference agent → a real TCP connection to the target, and all
// the way back) against the same traffic over direct loopback TCP, and the server's CPU per GiB relayed
// against one `socat -b 131072` hop's, all in the same run. The target is a TCP echo server; the client
// sends N MiB while reading the echo back concurrently, so every byte crosses each relay twice (up and
// down): CPU per GiB counts both directions for the tunnel and for socat alike. Figure = N MiB ÷ wall time
// from connecting until the last byte came back; the echo is checked byte for byte. Rows: one session,
// and 4 parallel sessions of N/4 each.
//
// Where things run, as in production: the server in a process of its own (bench/lib/command-server-child.ts)
// at the production log configuration (`info`, to /dev/null), reporting its own CPU; the reference agent
// in a process of its own (it runs on the customer's machine; random masking keys, as a real agent's);
// socat forks a process per connection, counted through its parent's reaped children; the clients and
// the echo target on a worker thread of this process (the technician's machine and the customer's
// device), which is also all the direct baseline uses. On 2 cores the parties share them, so the
// throughput understates a real deployment; the CPU per GiB is disturbed far less. The relay does not
// touch the database per byte: one backend only (the first of BENCH_BACKENDS).
//
// Direct, tunnel and socat runs interleave (after a 16 MiB untimed warm-up each); each ratio is the median
// of the per-run ratios. Targets: server CPU per GiB ≤ 2× one socat hop's (issue 36); throughput ≥ 0.40
// of direct (the earlier target). Measured, never asserted.
//
// Environment: BENCH_TUNNEL_MIB (512), BENCH_TUNNEL_RUNS (5), BENCH_BACKENDS (the first one is used;
// default: PostgreSQL when it answers, else PGlite), BENCH_DATABASE_URL, BENCH_TUNNEL_SERVER_FLAGS (Node
// flags for the server after its own, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`; none by default).
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { backendsFrom, nodeFlags, positiveNumber } from './lib/backends.js';
import { SERVER_NODE_ENV, SERVER_NODE_FLAGS } from '../src/platform/node-flags.js';
import { forkRpc } from './lib/child-rpc.js';
import { pidCpuMs } from './lib/cluster-processes.js';
import type { CommandServer } from './lib/command-server-child.js';
import { startEchoLoad, type EchoLoad } from './lib/echo-load.js';
import { startAgentProcess, startSocatHop, stop, type Relay } from './lib/relay-processes.js';
import { median, medianRatio } from './lib/stats.js';
import { runWhenMain, type BenchRow, type Target } from './lib/table.js';

export const name = 'tunnel-throughput';
const log = (message: string) => process.stderr.write(`[${name}] ${message}\n`);
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const WARMUP_BYTES = 16 * MiB;
const SERVER_FILE = fileURLToPath(new URL('./lib/command-server-child.ts', import.meta.url));
const TARGET_CPU: Target = { op: '≤', value: 2 };
const TARGET_RATE: Target = { op: '≥', value: 0.4 };

const message = (err: unknown) => (err instanceof Error ? err.message.split('\n')[0]! : String(err));

/** The real server in its own process, a reference agent process connected to it, and a tunnel to the target. */
async function startTunnel(backend: string, targetPort: number, serverFlags: string[]): Promise<Relay & { agentCpuMs(): Promise<number> }> {
  const agentDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-bench-agent-'));
  const server = forkRpc(SERVER_FILE, [...SERVER_NODE_FLAGS, ...serverFlags], SERVER_NODE_ENV);
  let agent: ChildProcess | undefined;
  const close = async () => {
    if (agent) await stop(agent); // before the server, so the agent does not start reconnecting to it
    await server.close();
    await rm(agentDir, { recursive: true, force: true });
  };
  try {
    const started = await server.call<CommandServer>('start', { kind: 'rmm', backend });
    const running = await startAgentProcess(started.url, started.agentKey, started.operatorKey, path.join(agentDir, 'state.json'), 'bench-tunnel');
    agent = running.child;
    const res = await fetch(`${started.url}/api/v1/agents/${running.agentId}/tunnel`, {
      method: 'POST',
      headers: { 'x-api-key': started.operatorKey, 'content-type': 'application/json' },
      body: JSON.stringify({ target_host: '127.0.0.1', target_port: targetPort }),
    });
    if (res.status !== 201) throw new Error(`POST /tunnel: HTTP ${res.status} ${await res.text()}`);
    const { proxy_port: port } = (await res.json()) as { proxy_port: number };
    return { port, cpuMs: () => server.call<number>('cpu'), agentCpuMs: () => pidCpuMs(running.child.pid!), close };
  } catch (err) {
    await close();
    throw err;
  }
}

interface Run {
  mibPerS: number;
  /** CPU seconds per GiB echoed (up and down), of the relay; NaN for direct. */
  cpuSPerGiB: number;
  agentCpuSPerGiB: number;
  failure?: string;
}

async function timed(load: EchoLoad, port: number, bytes: number, sessions: number, cpu?: () => Promise<number>, agentCpu?: () => Promise<number>): Promise<Run> {
  try {
    const [c0, a0] = await Promise.all([cpu?.(), agentCpu?.()]);
    const mibPerS = await load.throughput(port, bytes, sessions);
    const [c1, a1] = await Promise.all([cpu?.(), agentCpu?.()]);
    const perGiB = (from?: number, to?: number) => (from === undefined || to === undefined ? Number.NaN : (to - from) / 1000 / (bytes / GiB));
    return { mibPerS, cpuSPerGiB: perGiB(c0, c1), agentCpuSPerGiB: perGiB(a0, a1) };
  } catch (err) {
    return { mibPerS: Number.NaN, cpuSPerGiB: Number.NaN, agentCpuSPerGiB: Number.NaN, failure: message(err) };
  }
}

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const totalBytes = Math.round(positiveNumber(env, 'BENCH_TUNNEL_MIB', 512) * MiB);
  const runs = Math.round(positiveNumber(env, 'BENCH_TUNNEL_RUNS', 5));
  const backend = (await backendsFrom(env))[0]!;
  const mib = totalBytes / MiB;
  const serverFlags = nodeFlags(env, 'BENCH_TUNNEL_SERVER_FLAGS');
  const setting = (sessions: number) => `${mib} MiB echo, ${sessions} session${sessions === 1 ? '' : 's'}, ×${runs}${serverFlags.length ? ` (server: ${serverFlags.join(' ')})` : ''}`;
  const rateRow = { benchmark: name, backend, unit: 'MiB/s', baselineLabel: 'direct loopback TCP MiB/s', better: 'higher' as const, target: TARGET_RATE };
  const cpuRow = { benchmark: name, backend, unit: 'server CPU s/GiB', baselineLabel: 'one socat hop CPU s/GiB', better: 'lower' as const, target: TARGET_CPU };

  const load = await startEchoLoad();
  const [tunnel, socat] = await Promise.allSettled([startTunnel(backend, load.echoPort, serverFlags), startSocatHop(load.echoPort, log)]);
  try {
    if (tunnel.status === 'rejected') {
      const note = `not measured: the tunnel failed to start: ${message(tunnel.reason)}`;
      log(note);
      return [1, 4].flatMap((s) => [rateRow, cpuRow].map((r) => ({ ...r, setting: setting(s), figure: Number.NaN, baseline: Number.NaN, note })));
    }
    const hop = socat.status === 'fulfilled' ? socat.value : undefined;
    const hopMissing = socat.status === 'rejected' ? `socat failed to start: ${message(socat.reason)}` : '';
    const rig = tunnel.value;
    await timed(load, load.echoPort, WARMUP_BYTES, 1);
    await timed(load, rig.port, WARMUP_BYTES, 1);
    if (hop) await timed(load, hop.port, WARMUP_BYTES, 1);
    const rows: BenchRow[] = [];
    for (const sessions of [1, 4]) {
      const results = { direct: [] as Run[], tunnel: [] as Run[], socat: [] as Run[] };
      // Interleaved, so a noisy neighbour on the shared cores hits every side alike.
      for (let i = 0; i < runs; i++) {
        results.direct.push(await timed(load, load.echoPort, totalBytes, sessions));
        results.tunnel.push(await timed(load, rig.port, totalBytes, sessions, rig.cpuMs, rig.agentCpuMs));
        if (hop) results.socat.push(await timed(load, hop.port, totalBytes, sessions, () => hop.cpuMs()));
      }
      const list = (values: Run[], pick: (r: Run) => number, digits = 0) => values.map((r) => (r.failure ? 'failed' : pick(r).toFixed(digits))).join(', ');
      const ok = (values: Run[], pick: (r: Run) => number) => values.map(pick).filter(Number.isFinite);
      const failures = [...results.direct, ...results.tunnel, ...results.socat].filter((r) => r.failure);
      const trouble = failures.length ? ` Failed runs: ${failures.length} (first: ${failures[0]!.failure}).` : '';
      log(
        `${sessions} session(s): tunnel ${list(results.tunnel, (r) => r.mibPerS)} MiB/s at ${list(results.tunnel, (r) => r.cpuSPerGiB, 2)} server CPU s/GiB ` +
          `(agent ${list(results.tunnel, (r) => r.agentCpuSPerGiB, 2)}); direct ${list(results.direct, (r) => r.mibPerS)}; ` +
          `socat ${list(results.socat, (r) => r.mibPerS)} MiB/s at ${list(results.socat, (r) => r.cpuSPerGiB, 2)} CPU s/GiB`,
      );
      const pairRatio = (a: Run[], b: Run[], pick: (r: Run) => number) => {
        const pairs = a.map((r, i) => [pick(r), b[i] ? pick(b[i]) : Number.NaN]).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
        return medianRatio(pairs.map(([x]) => x!), pairs.map(([, y]) => y!));
      };
      rows.push(
        {
          ...rateRow,
          setting: setting(sessions),
          figure: median(ok(results.tunnel, (r) => r.mibPerS)),
          baseline: median(ok(results.direct, (r) => r.mibPerS)),
          ratio: pairRatio(results.tunnel, results.direct, (r) => r.mibPerS),
          errors: failures.length,
          note:
            `median of the per-run ratios; tunnel ${list(results.tunnel, (r) => r.mibPerS)}, direct ${list(results.direct, (r) => r.mibPerS)} MiB/s; ` +
            (hop ? `one socat hop ${list(results.socat, (r) => r.mibPerS)} MiB/s, ratio ${pairRatio(results.socat, results.direct, (r) => r.mibPerS).toFixed(2)}.` : `${hopMissing}.`) +
            trouble,
        },
        {
          ...cpuRow,
          setting: setting(sessions),
          figure: median(ok(results.tunnel, (r) => r.cpuSPerGiB)),
          baseline: median(ok(results.socat, (r) => r.cpuSPerGiB)),
          ratio: pairRatio(results.tunnel, results.socat, (r) => r.cpuSPerGiB),
          errors: failures.length,
          note:
            `the server process's user + system CPU per GiB echoed (each byte up and down), against socat's (its forked connection processes included); ` +
            `runs ${list(results.tunnel, (r) => r.cpuSPerGiB, 2)} vs ${hop ? list(results.socat, (r) => r.cpuSPerGiB, 2) : hopMissing}; ` +
            `the reference agent's own CPU: ${median(ok(results.tunnel, (r) => r.agentCpuSPerGiB)).toFixed(2)} s/GiB.` +
            trouble,
        },
      );
    }
    return rows;
  } finally {
    if (tunnel.status === 'fulfilled') await tunnel.value.close();
    if (socat.status === 'fulfilled') await socat.value.close();
    await load.close();
  }
}

runWhenMain(import.meta.url, () => run());
