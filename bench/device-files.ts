// Device file downloads (issue 59): the server's CPU per GiB downloaded through the agent
// (GET /agents/{id}/files/content: the reference agent reads the file and sends it in 256 KiB frames over
// its WebSocket, the server relays them to the HTTP client with backpressure both ways), against one
// `socat -b 131072` hop carrying the same file from a plain TCP source to the client, in the same run.
// The file is sparse (its content does not change what the relay costs; it spares the disk).
//
// Where things run: the server in a process of its own (bench/lib/command-server-child.ts) at the
// production log configuration, reporting its own CPU; the reference agent in a process of its own;
// socat forks a process per connection, counted through its parent's reaped children; the HTTP client and
// the TCP source in this process. Runs interleave (after a 16 MiB warm-up each); the ratio is the median
// of the per-run ratios. No target is given (issue 59 asks for the figure): the row reports the ratio.
// Measured, never asserted.
//
// Environment: BENCH_FILES_MIB (512), BENCH_FILES_RUNS (5), BENCH_BACKENDS (the first one is used),
// BENCH_DATABASE_URL.
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_ENV, SERVER_NODE_FLAGS } from '../src/platform/node-flags.js';
import { backendsFrom, positiveNumber } from './lib/backends.js';
import { forkRpc } from './lib/child-rpc.js';
import { pidCpuMs } from './lib/cluster-processes.js';
import type { CommandServer } from './lib/command-server-child.js';
import { startAgentProcess, startSocatHop, stop } from './lib/relay-processes.js';
import { median, medianRatio } from './lib/stats.js';
import { runWhenMain, type BenchRow } from './lib/table.js';

export const name = 'device-files';
const log = (line: string) => process.stderr.write(`[${name}] ${line}\n`);
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const SERVER_FILE = fileURLToPath(new URL('./lib/command-server-child.ts', import.meta.url));
const message = (err: unknown) => (err instanceof Error ? err.message.split('\n')[0]! : String(err));

/** Reads a whole HTTP response or TCP stream, discarding it; resolves with the byte count. */
function readAll(source: NodeJS.ReadableStream): Promise<number> {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    source.on('data', (chunk: Buffer) => (bytes += chunk.length));
    source.on('end', () => resolve(bytes));
    source.on('error', reject);
  });
}

const httpGet = (url: string, headers: Record<string, string>) =>
  new Promise<number>((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}`));
        readAll(res).then(resolve, reject);
      })
      .on('error', reject);
  });

const tcpGet = (port: number) =>
  new Promise<number>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', reject);
    readAll(socket).then(resolve, reject);
  });

/** A TCP source that sends `file` to every connection and closes it: what socat relays. */
async function fileSource(file: string): Promise<net.Server> {
  const server = net.createServer((socket) => createReadStream(file, { highWaterMark: 256 * 1024 }).pipe(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const bytes = Math.round(positiveNumber(env, 'BENCH_FILES_MIB', 512) * MiB);
  const runs = Math.round(positiveNumber(env, 'BENCH_FILES_RUNS', 5));
  const backend = (await backendsFrom(env))[0]!;
  const row = {
    benchmark: name,
    backend,
    setting: `${bytes / MiB} MiB download, ×${runs}`,
    unit: 'server CPU s/GiB',
    baselineLabel: 'one socat hop CPU s/GiB',
    better: 'lower' as const,
  };
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-bench-files-'));
  const file = path.join(dir, 'download.bin');
  const warm = path.join(dir, 'warm.bin');
  await writeFile(file, '');
  await truncate(file, bytes);
  await writeFile(warm, '');
  await truncate(warm, 16 * MiB);
  const server = forkRpc(SERVER_FILE, [...SERVER_NODE_FLAGS], SERVER_NODE_ENV);
  const source = await fileSource(file);
  let agent: Awaited<ReturnType<typeof startAgentProcess>> | undefined;
  let hop: Awaited<ReturnType<typeof startSocatHop>> | undefined;
  try {
    const started = await server.call<CommandServer>('start', { kind: 'rmm', backend, deviceApiKeys: true });
    agent = await startAgentProcess(started.url, started.agentKey, started.operatorKey, path.join(dir, 'state.json'), 'bench-files');
    const hopOrWhy = await startSocatHop((source.address() as AddressInfo).port, log).catch((err: unknown) => message(err));
    if (typeof hopOrWhy !== 'string') hop = hopOrWhy;
    const headers = { 'x-api-key': started.operatorKey };
    const url = (p: string) => `${started.url}/api/v1/agents/${agent!.agentId}/files/content?${new URLSearchParams({ path: p }).toString()}`;
    // The agent announces `files` in its hello frame; its row is written just after it connected.
    for (let i = 0; ; i++) {
      try {
        await httpGet(url(warm), headers);
        break;
      } catch (err) {
        if (i === 100) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    if (hop) await tcpGet(hop.port);
    const server_: number[] = [];
    const socat: number[] = [];
    const agentCpu: number[] = [];
    for (let i = 0; i < runs; i++) {
      const [c0, a0] = [await server.call<number>('cpu'), await pidCpuMs(agent.child.pid!)];
      const got = await httpGet(url(file), headers);
      const [c1, a1] = [await server.call<number>('cpu'), await pidCpuMs(agent.child.pid!)];
      if (got !== bytes) throw new Error(`downloaded ${got} of ${bytes} bytes`);
      server_.push((c1 - c0) / 1000 / (bytes / GiB));
      agentCpu.push((a1 - a0) / 1000 / (bytes / GiB));
      if (hop) {
        const s0 = await hop.cpuMs();
        const relayed = await tcpGet(hop.port);
        const s1 = await hop.cpuMs();
        if (relayed !== bytes) throw new Error(`socat relayed ${relayed} of ${bytes} bytes`);
        socat.push((s1 - s0) / 1000 / (bytes / GiB));
      }
    }
    const list = (values: number[]) => values.map((v) => v.toFixed(2)).join(', ');
    log(`server ${list(server_)} CPU s/GiB (agent ${list(agentCpu)}); socat ${hop ? list(socat) : hopOrWhy}`);
    return [
      {
        ...row,
        figure: median(server_),
        baseline: hop ? median(socat) : Number.NaN,
        ratio: hop ? medianRatio(server_, socat) : Number.NaN,
        errors: 0,
        note:
          `the server process's user + system CPU per GiB downloaded (agent WebSocket in, HTTP out), median of the per-run ratios; runs ${list(server_)} vs ${hop ? list(socat) : hopOrWhy}; ` +
          `the reference agent's own CPU: ${median(agentCpu).toFixed(2)} s/GiB. No target (issue 59 asks for the figure).`,
      },
    ];
  } catch (err) {
    const note = `not measured: ${message(err)}`;
    log(note);
    return [{ ...row, figure: Number.NaN, baseline: Number.NaN, note }];
  } finally {
    if (agent) await stop(agent.child);
    await hop?.close();
    await server.close();
    source.close();
    await rm(dir, { recursive: true, force: true });
  }
}

runWhenMain(import.meta.url, () => run());
