// Cluster mode (issue 32, acceptance 5), on PostgreSQL with a nats-server of its own; the instances are
// processes of their own (src/main.ts, production log level), their CPU read from /proc.
// 1. Command round trip: POST /agents/{id}/exec one at a time, the agent (a bare socket answering at once)
//    connected to instance A; through A (same instance, the baseline) and through B (over NATS to A and
//    back), in interleaved blocks. Target: cross-instance p50 ≤ 1.5 × same-instance p50.
// 2. Heartbeats/s into one instance (one load client, BENCH_CONCURRENCY clients) and into two (two load
//    clients of half the clients each, one per instance), in interleaved rounds. Reported, no target: on
//    two shared cores the instances, PostgreSQL and the load clients compete for the same CPU, so two
//    instances cannot show scaling here; the figure shows what the second instance costs or saves.
//
// Environment: BENCH_DATABASE_URL, BENCH_ROUNDTRIPS (1000 each way, after 100 untimed), BENCH_CLUSTER_ROUNDS (3),
// BENCH_CONCURRENCY (first value, 32), BENCH_AGENTS (500), BENCH_WARMUP_S (4), BENCH_DURATION_S (8), BENCH_BODY_BYTES, BENCH_FIXTURE.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { openPostgres } from '../src/db/create-db.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { createLogger } from '../src/platform/logger.js';
import { createDatabase, dropDatabase, withDatabase } from '../test/helpers/postgres-admin.js';
import { percentiles, positiveNumber } from './lib/backends.js';
import { cpuMs, json, makeKeys, startInstance, startNatsServer, type Proc } from './lib/cluster-processes.js';
import { postgresAdminUrl } from './lib/databases.js';
import { DEFAULT_FIXTURE } from './lib/heartbeat-body.js';
import { measure } from './lib/load.js';
import { median } from './lib/stats.js';
import { runWhenMain, type BenchRow, type Target } from './lib/table.js';

export const name = 'cluster';
const log = (message: string) => process.stderr.write(`[${name}] ${message}\n`);
const PASSWORD = 'bench-cluster-password';
const TARGET = 1.5;
const TARGET_CROSS: Target = { op: '≤', value: TARGET };
const BLOCK = 100;

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const admin = await postgresAdminUrl(env);
  const base = { benchmark: name, backend: 'postgres' };
  if (!admin.url) return [{ ...base, setting: '–', figure: Number.NaN, unit: '–', baseline: Number.NaN, baselineLabel: '–', better: 'lower', note: `skipped: cluster mode needs PostgreSQL (${admin.reason})` }];
  const dbName = await createDatabase({ adminUrl: admin.url, prefix: `rmm_bench_cluster_${process.pid}` });
  const url = withDatabase(admin.url, dbName);
  const migrating = openPostgres(url, createLogger({ level: 'silent' }));
  await migrateToLatest(migrating);
  await migrating.close();
  const nats = await startNatsServer();
  const shared = { DATABASE_URL: url, NATS_URL: nats.url, ADVERTISE_ADDRESS: '127.0.0.1', JWT_SECRET: randomBytes(24).toString('hex'), ENCRYPTION_KEY: randomBytes(24).toString('hex') };
  const procs: Proc[] = [];
  try {
    const a = await startInstance({ ...shared, INSTANCE_ID: 'a', ADMIN_PASSWORD: PASSWORD });
    procs.push(a);
    const b = await startInstance({ ...shared, INSTANCE_ID: 'b' });
    procs.push(b);
    const keys = await makeKeys(a.api, PASSWORD);
    log(`two instances on ${dbName} with NATS at ${nats.url}`);
    return [...(await commandRows(a, b, keys, env)), ...(await heartbeatRows(a, b, keys, env))];
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await nats.stop();
    await dropDatabase(admin.url, dbName);
  }
}

async function register(api: string, agentKey: string, id: string): Promise<void> {
  await json(`${api}/agent/register`, { method: 'POST', headers: { 'x-api-key': agentKey }, body: JSON.stringify({ agent_id: id, name: `bench-${id.slice(0, 8)}`, hostname: `bench-${id.slice(0, 8)}`, platform: 'linux' }) });
}

async function commandRows(a: Proc, b: Proc, keys: { admin: string; agent: string }, env: NodeJS.ProcessEnv): Promise<BenchRow[]> {
  const count = positiveNumber(env, 'BENCH_ROUNDTRIPS', 1000);
  const id = randomBytes(16).toString('hex');
  await register(a.api, keys.agent, id);
  const socket = new WebSocket(`${a.api.replace(/^http/, 'ws')}/agent/ws?agent_id=${id}`, { headers: { 'x-api-key': keys.agent } });
  socket.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { id: string };
    socket.send(JSON.stringify({ type: 'response', id: frame.id, success: true, data: { exit_code: 0, stdout: 'hi\n', stderr: '' } }));
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  // B must see the agent as connected (presence announced over NATS) before it is asked.
  for (let i = 0; i < 100 && !(await json<{ connected: boolean }>(`${b.api}/agents/${id}`, { headers: { 'x-api-key': keys.admin } })).connected; i++) await new Promise((r) => setTimeout(r, 100));
  const exec = async (via: Proc) => {
    const res = await fetch(`${via.api}/agents/${id}/exec`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': keys.admin }, body: '{"command":"echo hi","timeout":10}' });
    if (res.status !== 200) throw new Error(`exec through ${via.api}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };
  for (let i = 0; i < BLOCK; i++) await Promise.all([exec(a), exec(b)].map((p) => p));
  const times = { same: [] as number[], cross: [] as number[] };
  const cpu = { same: 0, cross: 0 };
  const procs = [a, b];
  // Interleaved blocks: same, cross, cross, same, ... so neither always follows the other.
  for (let block = 0; block < (2 * count) / BLOCK; block++) {
    const kind = block % 4 === 0 || block % 4 === 3 ? 'same' : 'cross';
    const before = await cpuMs(procs);
    for (let i = 0; i < BLOCK; i++) {
      const started = performance.now();
      await exec(kind === 'same' ? a : b);
      times[kind].push(performance.now() - started);
    }
    cpu[kind] += (await cpuMs(procs)) - before;
  }
  socket.close();
  const same = percentiles(times.same);
  const cross = percentiles(times.cross);
  const ratio = cross.p50 / same.p50;
  log(`commands: same p50 ${same.p50.toFixed(2)} p99 ${same.p99.toFixed(2)} ms, cross p50 ${cross.p50.toFixed(2)} p99 ${cross.p99.toFixed(2)} ms`);
  return [
    {
      benchmark: name,
      backend: 'postgres',
      setting: `exec one at a time, ${times.cross.length} each way`,
      figure: cross.p50,
      unit: 'ms p50, through B to an agent on A',
      target: TARGET_CROSS,
      baseline: same.p50,
      baselineLabel: 'ms p50, through A (same instance)',
      better: 'lower',
      p50Ms: cross.p50,
      p99Ms: cross.p99,
      errors: 0,
      note:
        `target cross ≤ ${TARGET} × same p50: ${ratio.toFixed(2)} ${ratio <= TARGET ? '✔' : '✘'}. Same instance p99 ${same.p99.toFixed(2)} ms. ` +
        `CPU of both instances per command: same ${(cpu.same / times.same.length).toFixed(2)} ms, cross ${(cpu.cross / times.cross.length).toFixed(2)} ms.`,
    },
  ];
}

async function heartbeatRows(a: Proc, b: Proc, keys: { admin: string; agent: string }, env: NodeJS.ProcessEnv): Promise<BenchRow[]> {
  const agents = Math.round(positiveNumber(env, 'BENCH_AGENTS', 500));
  const clients = Number((env.BENCH_CONCURRENCY ?? '32').split(',')[0]);
  const rounds = positiveNumber(env, 'BENCH_CLUSTER_ROUNDS', 3);
  const ids = Array.from({ length: agents }, () => randomBytes(16).toString('hex'));
  for (let i = 0; i < ids.length; i += 50) await Promise.all(ids.slice(i, i + 50).map((id) => register(a.api, keys.agent, id)));
  const plan = (api: string, agentIds: string[], concurrency: number) => ({
    url: `${api}/agent/heartbeat`,
    apiKey: keys.agent,
    agentIds,
    concurrency,
    warmupMs: positiveNumber(env, 'BENCH_WARMUP_S', 4) * 1000,
    durationMs: positiveNumber(env, 'BENCH_DURATION_S', 8) * 1000,
    fixture: env.BENCH_FIXTURE ?? DEFAULT_FIXTURE,
    bodyBytes: Math.round(positiveNumber(env, 'BENCH_BODY_BYTES', 30 * 1024)),
  });
  const half = Math.floor(agents / 2);
  const results = { one: [] as Array<{ rate: number; p50: number; p99: number; cpu: number; errors: number }>, two: [] as Array<{ rate: number; p50: number; p99: number; cpu: number; errors: number }> };
  for (let round = 0; round < rounds; round++) {
    for (const kind of round % 2 === 0 ? (['one', 'two'] as const) : (['two', 'one'] as const)) {
      const before = await cpuMs([a, b]);
      const started = performance.now();
      const parts = kind === 'one' ? [await measure(plan(a.api, ids, clients))] : await Promise.all([measure(plan(a.api, ids.slice(0, half), clients / 2)), measure(plan(b.api, ids.slice(half), clients / 2))]);
      const used = (await cpuMs([a, b])) - before;
      const wall = performance.now() - started;
      const rate = parts.reduce((t, p) => t + p.ratePerS, 0);
      // CPU over the whole round (warm-up included) per heartbeat of the whole round, estimated from the window's rate.
      const entry = { rate, p50: median(parts.map((p) => p.p50Ms)), p99: Math.max(...parts.map((p) => p.p99Ms)), cpu: used / (rate * (wall / 1000)), errors: parts.reduce((t, p) => t + p.errors, 0) };
      results[kind].push(entry);
      log(`heartbeats into ${kind} instance(s), round ${round + 1}: ${rate.toFixed(0)}/s, p50 ${entry.p50.toFixed(1)} p99 ${entry.p99.toFixed(1)} ms, ${entry.cpu.toFixed(2)} ms instance CPU/heartbeat, ${entry.errors} errors`);
    }
  }
  const m = (kind: 'one' | 'two', pick: (r: (typeof results)['one'][number]) => number) => median(results[kind].map(pick));
  return [
    {
      benchmark: name,
      backend: 'postgres',
      setting: `heartbeats, ${clients} clients, ${agents} agents, ${rounds} interleaved rounds`,
      figure: m('two', (r) => r.rate),
      unit: 'heartbeats/s into two instances',
      baseline: m('one', (r) => r.rate),
      baselineLabel: 'heartbeats/s into one instance',
      better: 'higher',
      p50Ms: m('two', (r) => r.p50),
      p99Ms: m('two', (r) => r.p99),
      errors: results.two.reduce((t, r) => t + r.errors, 0) + results.one.reduce((t, r) => t + r.errors, 0),
      note:
        `no target (reported): two shared cores run both instances, PostgreSQL and the load clients, so a second instance cannot add CPU here. ` +
        `Instance CPU per heartbeat: two ${m('two', (r) => r.cpu).toFixed(2)} ms, one ${m('one', (r) => r.cpu).toFixed(2)} ms; one instance p50 ${m('one', (r) => r.p50).toFixed(1)} ms, p99 ${m('one', (r) => r.p99).toFixed(1)} ms.`,
    },
  ];
}

runWhenMain(import.meta.url, () => run());
