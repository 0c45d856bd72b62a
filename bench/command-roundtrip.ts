// B2, command round trip: p50/p99 of POST /agents/{id}/exec on the real server → the agent's WebSocket →
// its answer → the HTTP response, one command at a time over loopback. The agent side answers at once
// (the round trip is the server's, not a shell's). Baseline, in the same process and run: the same HTTP
// request to a bare Fastify route that forwards the body over a bare `ws` socket to an echo peer and
// answers with the echo — a raw WebSocket echo round trip behind the same HTTP hop.
// Issue target: ≤ 2× the baseline. Measured, never asserted.
//
// Environment: BENCH_BACKENDS (PostgreSQL when it answers, else pglite), BENCH_DATABASE_URL, BENCH_ROUNDTRIPS (2000, after 200 untimed).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Fastify from 'fastify';
import WebSocket, { WebSocketServer } from 'ws';
import { buildServerApp } from '../src/apps/server/build-app.js';
import { createCoreServices } from '../src/apps/server/services.js';
import { loadConfig } from '../src/config/env.js';
import type { DbHandle } from '../src/db/create-db.js';
import { systemClock } from '../src/platform/clock.js';
import { createLogger } from '../src/platform/logger.js';
import { backendsFrom, openBackend, percentiles, positiveNumber } from './lib/backends.js';
import { runWhenMain, type BenchRow } from './lib/table.js';

export const name = 'command-roundtrip';
const log = (message: string) => process.stderr.write(`[${name}] ${message}\n`);
const EXEC_BODY = JSON.stringify({ command: 'echo hi', timeout: 10 });

/** Answers every command frame at once, as an agent with nothing to do would. */
function answerAtOnce(socket: WebSocket): void {
  socket.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { id: string };
    socket.send(JSON.stringify({ type: 'response', id: frame.id, success: true, data: { exit_code: 0, stdout: 'hi\n', stderr: '' } }));
  });
}

async function timeRoundTrips(count: number, once: () => Promise<void>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 200; i++) await once();
  const durations: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await once();
    durations.push(performance.now() - started);
  }
  return percentiles(durations);
}

async function post(url: string, headers: Record<string, string>): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: EXEC_BODY });
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

/** The floor: HTTP in, one frame out over a bare ws socket, its echo back, HTTP out. */
async function baseline(count: number): Promise<{ p50: number; p99: number }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((resolve) => wss.once('listening', resolve));
  const peer = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  peer.on('message', (data) => peer.send(data));
  const [serverSide] = (await Promise.all([new Promise<WebSocket>((resolve) => wss.once('connection', resolve)), new Promise((r) => peer.once('open', r))])) as [WebSocket, unknown];
  const waiting = new Map<string, (data: string) => void>();
  serverSide.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { id: string };
    waiting.get(frame.id)?.(String(data));
    waiting.delete(frame.id);
  });
  const app = Fastify();
  app.post('/exec', async (request) => {
    const id = randomBytes(8).toString('hex');
    const answer = new Promise<string>((resolve) => waiting.set(id, resolve));
    serverSide.send(JSON.stringify({ type: 'command', id, command: 'exec', params: request.body }));
    return JSON.parse(await answer) as unknown;
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    return await timeRoundTrips(count, () => post(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/exec`, {}));
  } finally {
    peer.close();
    await app.close();
    wss.close();
  }
}

async function realServer(db: DbHandle, count: number): Promise<{ p50: number; p99: number }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-bench-'));
  const secrets = { jwtSecret: randomBytes(32).toString('base64url'), encryptionKey: randomBytes(32) };
  const app = await buildServerApp({ config: loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), db, logger: createLogger({ level: 'silent' }), secrets });
  const agent = { close: () => undefined as void };
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const services = createCoreServices(db, secrets, systemClock);
    const actor = { kind: 'user' as const, userId: 0, username: 'bench', role: 'admin' as const, customerIds: null };
    const agentKey = (await services.apiKeys.create(actor, { name: 'agent', permissions: 'agent' })).key;
    const writeKey = (await services.apiKeys.create(actor, { name: 'operator', permissions: 'write' })).key;
    const reg = await fetch(`http://${base}/api/v1/agent/register`, { method: 'POST', headers: { 'x-api-key': agentKey, 'content-type': 'application/json' }, body: JSON.stringify({ hostname: 'bench', platform: 'linux' }) });
    const { agent_id: agentId } = (await reg.json()) as { agent_id: string };
    const socket = new WebSocket(`ws://${base}/api/v1/agent/ws?agent_id=${agentId}`, { headers: { 'x-api-key': agentKey } });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    answerAtOnce(socket);
    agent.close = () => socket.close();
    return await timeRoundTrips(count, () => post(`http://${base}/api/v1/agents/${agentId}/exec`, { 'x-api-key': writeKey }));
  } finally {
    agent.close();
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const count = Math.round(positiveNumber(env, 'BENCH_ROUNDTRIPS', 2000));
  const rows: BenchRow[] = [];
  for (const backend of await backendsFrom(env)) {
    const base = { benchmark: name, backend, setting: `${count} sequential`, unit: 'ms p50', baselineLabel: 'HTTP + raw ws echo p50', better: 'lower' as const };
    const handle = await openBackend(backend, env);
    if (typeof handle === 'string') {
      rows.push({ ...base, figure: Number.NaN, baseline: Number.NaN, note: handle });
      continue;
    }
    try {
      const echo = await baseline(count);
      const ours = await realServer(handle, count);
      log(`${backend}: exec round trip p50 ${ours.p50.toFixed(3)} ms p99 ${ours.p99.toFixed(3)} ms; echo p50 ${echo.p50.toFixed(3)} ms p99 ${echo.p99.toFixed(3)} ms`);
      rows.push({ ...base, figure: ours.p50, baseline: echo.p50, p50Ms: ours.p50, p99Ms: ours.p99, note: `baseline p99 ${echo.p99.toFixed(2)} ms` });
    } finally {
      await handle.close();
    }
  }
  return rows;
}

runWhenMain(import.meta.url, () => run());
