// B3, tunnel throughput: MiB/s through a TCP tunnel of the real server (client → proxy port → the agent's
// WebSocket → the project's reference agent → a real TCP connection to the target, and all the way
// back) against the same traffic over direct loopback TCP, in the same run. The target is a TCP echo
// server; the client sends N MiB while reading the echo back concurrently, so every byte crosses the
// tunnel twice (up and down). Figure = N MiB ÷ wall time from connecting until the last byte came back
// (the session's tunnel_connect round trip is inside, negligible at these sizes); the echo is checked
// byte for byte. Rows: one session, and 4 parallel sessions of N/4 each against 4 direct connections.
//
// Where things run, as in production: the server on this process's main thread; the reference agent in
// a process of its own (it runs on the customer's machine); the clients and the echo target on a worker
// thread (the technician's machine and the customer's device), which is also all the direct baseline
// uses. On 2 cores the tunnel's three busy parties share them, so the figure understates a real
// deployment. The relay does not touch the database per byte: one backend only (the first of
// BENCH_BACKENDS).
//
// Each figure is the median of the runs (direct, tunnel and a naive relay interleave, after a 16 MiB
// untimed warm-up); all runs go to the note, with a naive one-hop `pipe()` relay's figure for context.
// Issue target: ≥ 0.40 of direct; a naive Node relay measured 0.35–0.45 on this machine. Measured,
// never asserted.
//
// Environment: BENCH_TUNNEL_MIB (512), BENCH_TUNNEL_RUNS (5), BENCH_BACKENDS (the first one is used;
// default: PostgreSQL when it answers, else PGlite), BENCH_DATABASE_URL.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildServerApp } from '../src/apps/server/build-app.js';
import { createCoreServices } from '../src/apps/server/services.js';
import { loadConfig } from '../src/config/env.js';
import type { DbHandle } from '../src/db/create-db.js';
import { systemClock } from '../src/platform/clock.js';
import { createLogger } from '../src/platform/logger.js';
import { backendsFrom, openBackend, positiveNumber } from './lib/backends.js';
import { startEchoLoad } from './lib/echo-load.js';
import { median } from './lib/stats.js';
import { runWhenMain, type BenchRow } from './lib/table.js';

export const name = 'tunnel-throughput';
const log = (message: string) => process.stderr.write(`[${name}] ${message}\n`);
const MiB = 1024 * 1024;
const WARMUP_BYTES = 16 * MiB;


/**
 * For context, not the baseline: the naive relay the target comes from, one `pipe()` each way
 * on this process's main thread (where the server runs), straight to the target.
 */
async function startNaiveRelay(targetPort: number): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const target = net.connect({ port: targetPort, host: '127.0.0.1' });
    for (const socket of [client, target]) {
      sockets.add(socket);
      socket.on('error', () => undefined).on('close', () => sockets.delete(socket));
    }
    client.pipe(target).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

interface TunnelRig {
  proxyPort: number;
  close(): Promise<void>;
}

/** Starts `npm run agent` against `url` and resolves once it is connected (its id from /hub/status). */
async function startAgentProcess(url: string, agentKey: string, readKey: string, stateFile: string): Promise<{ agentId: string; child: ChildProcess }> {
  const args = ['--import', 'tsx', 'src/agent/main.ts', '--server', url, '--name', 'bench-tunnel', '--state', stateFile, '--platform', 'linux', '--interval', '3600'];
  const child = spawn(process.execPath, args, { env: { ...process.env, RMM_AGENT_KEY: agentKey }, stdio: 'ignore' });
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(100)) {
    const status = (await (await fetch(`${url}/api/v1/hub/status`, { headers: { 'x-api-key': readKey } })).json()) as { agents: Array<{ agent_id: string }> };
    const agentId = status.agents[0]?.agent_id;
    if (agentId) return { agentId, child };
  }
  child.kill();
  throw new Error('the reference agent did not connect within 20 s');
}

/** The real server on 127.0.0.1:0, a reference agent process connected to it, and a tunnel to the echo target. */
async function startTunnel(db: DbHandle, targetPort: number): Promise<TunnelRig> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-bench-'));
  const agentDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-bench-agent-'));
  const secrets = { jwtSecret: randomBytes(32).toString('base64url'), encryptionKey: randomBytes(32) };
  const app = await buildServerApp({ config: loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), db, logger: createLogger({ level: 'silent' }), secrets });
  let agent: ChildProcess | undefined;
  const close = async () => {
    if (agent && agent.exitCode === null) {
      // Before the app, so the agent does not start reconnecting to a closing server.
      const exited = new Promise((resolve) => agent!.once('exit', resolve));
      agent.kill('SIGINT');
      await exited;
    }
    await app.close();
    await Promise.all([dataDir, agentDir].map((dir) => rm(dir, { recursive: true, force: true })));
  };
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const services = createCoreServices(db, secrets, systemClock);
    const actor = { kind: 'user' as const, userId: 0, username: 'bench', role: 'admin' as const, customerIds: null };
    const agentKey = (await services.apiKeys.create(actor, { name: 'agent', permissions: 'agent' })).key;
    const writeKey = (await services.apiKeys.create(actor, { name: 'operator', permissions: 'write' })).key;
    const started = await startAgentProcess(url, agentKey, writeKey, path.join(agentDir, 'state.json'));
    agent = started.child;
    const res = await fetch(`${url}/api/v1/agents/${started.agentId}/tunnel`, {
      method: 'POST',
      headers: { 'x-api-key': writeKey, 'content-type': 'application/json' },
      body: JSON.stringify({ target_host: '127.0.0.1', target_port: targetPort }),
    });
    if (res.status !== 201) throw new Error(`POST /tunnel: HTTP ${res.status} ${await res.text()}`);
    const { proxy_port: proxyPort } = (await res.json()) as { proxy_port: number };
    return { proxyPort, close };
  } catch (err) {
    await close();
    throw err;
  }
}

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const totalBytes = Math.round(positiveNumber(env, 'BENCH_TUNNEL_MIB', 512) * MiB);
  const runs = Math.round(positiveNumber(env, 'BENCH_TUNNEL_RUNS', 5));
  const backend = (await backendsFrom(env))[0]!;
  const mib = totalBytes / MiB;
  const rowBase = (sessions: number) => ({
    benchmark: name,
    backend,
    setting: sessions === 1 ? `${mib} MiB echo, 1 session` : `${mib} MiB echo, ${sessions} sessions`,
    unit: 'MiB/s',
    baselineLabel: 'direct loopback TCP MiB/s',
    better: 'higher' as const,
  });
  const handle = await openBackend(backend, env);
  if (typeof handle === 'string') return [1, 4].map((s) => ({ ...rowBase(s), figure: Number.NaN, baseline: Number.NaN, note: handle }));

  const rows: BenchRow[] = [];
  const load = await startEchoLoad();
  const relay = await startNaiveRelay(load.echoPort);
  let rig: TunnelRig | undefined;
  try {
    rig = await startTunnel(handle, load.echoPort);
    await load.throughput(load.echoPort, WARMUP_BYTES, 1);
    await load.throughput(rig.proxyPort, WARMUP_BYTES, 1);
    for (const sessions of [1, 4]) {
      const direct: number[] = [];
      const tunnel: number[] = [];
      const naive: number[] = [];
      // Interleaved, so a noisy neighbour on the shared cores hits every side alike.
      for (let i = 0; i < runs; i++) {
        direct.push(await load.throughput(load.echoPort, totalBytes, sessions));
        tunnel.push(await load.throughput(rig.proxyPort, totalBytes, sessions));
        naive.push(await load.throughput(relay.port, totalBytes, sessions));
      }
      const list = (values: number[]) => values.map((v) => v.toFixed(0)).join(', ');
      log(`${backend}, ${sessions} session(s), ${mib} MiB: tunnel ${list(tunnel)}; direct ${list(direct)}; naive relay ${list(naive)} MiB/s`);
      const naiveRatio = (median(naive) / median(direct)).toFixed(2);
      rows.push({
        ...rowBase(sessions),
        figure: median(tunnel),
        baseline: median(direct),
        note: `median of ${runs}; tunnel ${list(tunnel)}, direct ${list(direct)} MiB/s; a naive one-hop pipe() relay: ${list(naive)} MiB/s, ratio ${naiveRatio}`,
      });
    }
  } finally {
    await rig?.close();
    await relay.close();
    await load.close();
    await handle.close();
  }
  return rows;
}

runWhenMain(import.meta.url, () => run());
