// The measured windows of bench/checks.ts, against one real server and one simulated fleet (each in a
// process of its own, as fleet-scale.ts runs them): a steady window (the server's CPU, its heartbeat
// p99 and the agents', results stored, failed heartbeats) and a policy change (from the PUT until every
// agent accepted the new set, with the heartbeats' p99 in that time). Also the bench's policy: ten
// checks, one of each kind, every 60 s, for every platform of the fleet.
import { setTimeout as delay } from 'node:timers/promises';
import { percentiles } from './backends.js';
import type { RpcChild } from './child-rpc.js';
import type { FleetChildStats } from './fleet-measure.js';
import type { CpuSample, LoopDelay } from './fleet-server-child.js';
import { backendCpuMs } from './pg-backend-cpu.js';

export interface Window {
  seconds: number;
  /** The server process's CPU (ms) in the window; on PostgreSQL the database backends' beside it. */
  serverCpuMs: number;
  databaseCpuMs: number | undefined;
  heartbeats: number;
  serverP99Ms: number;
  agentP99Ms: number;
  agentP50Ms: number;
  fleetLoopMaxMs: number;
  /** The fleet process's CPU (ms) in the window: 10,000 agents' heartbeats, sockets and simulated checks. */
  fleetCpuMs: number;
  /** Results the server took (received less ignored), and the agents produced, in the window. */
  resultsStored: number;
  resultsProduced: number;
  failedHeartbeats: number;
}

export interface PolicyChange {
  /** From the PUT's start until the last agent accepted the new set; NaN when not all did in time. */
  reachAllMs: number;
  putMs: number;
  agents: number;
  accepted: number;
  agentP99Ms: number;
  serverP99Ms: number;
  failedHeartbeats: number;
  fleetLoopMaxMs: number;
}

interface Status {
  received_results: number;
  ignored_results: number;
}

export interface BenchPolicy {
  name: string;
  enabled: boolean;
  platforms: string[];
  checks: Array<{ id?: string; name: string; kind: string; params: Record<string, unknown> }>;
}

export type Api = <T>(method: string, route: string, body?: unknown) => Promise<T>;

/** A JSON client of the server's API with an operator key; an answer other than 2xx throws with its body. */
export function apiClient(base: string, key: string): Api {
  return async <T>(method: string, route: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${base}/api/v1${route}`, { method, headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: HTTP ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  };
}

const INTERVAL = { interval_seconds: 60, timeout_seconds: 10 };

/**
 * Ten checks, one of each kind, every 60 s: ten results a minute per agent. One policy for the whole
 * mixed fleet, so Windows agents (40 %) have no `cron` service (CRITICAL) and no `/` (UNKNOWN, without
 * perfdata): steady states, stored like any other. The process check's `init` matches all three.
 */
export function benchPolicy(enabled: boolean, diskWarnPercent = 85, ids: readonly string[] = []): BenchPolicy {
  // The ids of the created checks keep them (and their states) across the bench's PUTs: without them a
  // PUT replaces every check, and each agent starts ten new ones.
  const check = (name: string, kind: string, params: Record<string, unknown>) => ({ name, kind, params, ...INTERVAL });
  const policy = {
    name: 'bench: ten checks',
    enabled,
    platforms: ['linux', 'freebsd', 'windows'],
    checks: [
      check('cron', 'service', { name: 'cron' }),
      check('init', 'process', { pattern: 'init', match: 'command', min: 1 }),
      check('disk', 'disk', { mount: '/', warn_percent: diskWarnPercent, crit_percent: 95 }),
      check('cpu', 'cpu', { warn_percent: 90, crit_percent: 98 }),
      check('memory', 'memory', { warn_percent: 90, crit_percent: 97 }),
      check('intranet', 'http', { url: 'https://intranet.bench.lan/health', warn_ms: 800, cert_warn_days: 21 }),
      check('database port', 'tcp', { host: '10.0.0.10', port: 5432, warn_ms: 200 }),
      check('gateway', 'ping', { host: '10.0.0.1', warn_loss_percent: 20 }),
      check('resolver', 'dns', { name: 'intranet.bench.lan' }),
      check('ntp plugin', 'script', { command: '/usr/lib/nagios/plugins/check_ntp_time', args: ['-H', 'pool.ntp.org'] }),
    ],
  };
  return { ...policy, checks: policy.checks.map((c, i) => (ids[i] ? { id: ids[i], ...c } : c)) };
}

const stored = (s: Status) => s.received_results - s.ignored_results;

/** One steady window of `ms`: what the server and the fleet did in it. */
export async function measureWindow(server: RpcChild, fleet: RpcChild, api: Api, ms: number): Promise<Window> {
  await fleet.call('latencies');
  await server.call('delays');
  const [statusFrom, cpuFrom, ticksFrom, fleetFrom] = await Promise.all([api<Status>('GET', '/checks/status'), server.call<CpuSample>('cpu'), server.call<Array<[number, number]> | null>('backendTicks'), fleet.call<FleetChildStats>('stats')]);
  await delay(ms);
  const [cpuTo, loop, ticksTo] = await Promise.all([server.call<CpuSample>('cpu'), server.call<LoopDelay>('delays'), server.call<Array<[number, number]> | null>('backendTicks')]);
  const [{ latencies, loopDelayMaxMs }, statusTo, fleetTo] = await Promise.all([fleet.call<{ latencies: number[]; loopDelayMaxMs: number }>('latencies'), api<Status>('GET', '/checks/status'), fleet.call<FleetChildStats>('stats')]);
  const { p50, p99 } = percentiles(latencies);
  return {
    seconds: (cpuTo.atMs - cpuFrom.atMs) / 1000,
    serverCpuMs: cpuTo.cpuMs - cpuFrom.cpuMs,
    databaseCpuMs: ticksFrom && ticksTo ? backendCpuMs(new Map(ticksFrom), new Map(ticksTo)) : undefined,
    heartbeats: loop.heartbeats,
    serverP99Ms: loop.heartbeatP99Ms,
    agentP99Ms: p99,
    agentP50Ms: p50,
    fleetLoopMaxMs: loopDelayMaxMs,
    fleetCpuMs: fleetTo.cpuMs - fleetFrom.cpuMs,
    resultsStored: stored(statusTo) - stored(statusFrom),
    resultsProduced: fleetTo.checkResults - fleetFrom.checkResults,
    failedHeartbeats: fleetTo.heartbeatsFailed - fleetFrom.heartbeatsFailed,
  };
}

/**
 * PUTs `policy` (a changed threshold) and waits until `agents` agents accepted a set since the PUT
 * began, at most `limitMs`; the heartbeats of that time give the p99s. The times are the fleet's own
 * (when each agent answered checks_set) against this process's clock: the same machine's.
 */
export async function measurePolicyChange(server: RpcChild, fleet: RpcChild, api: Api, policyId: number, policy: BenchPolicy, agents: number, limitMs: number): Promise<PolicyChange> {
  await fleet.call('latencies');
  await server.call('delays');
  const failedFrom = (await fleet.call<FleetChildStats>('stats')).heartbeatsFailed;
  const since = Date.now();
  await api('PUT', `/check-policies/${policyId}`, policy);
  const putMs = Date.now() - since;
  let seen = { agents: 0, lastAt: null as number | null };
  for (const deadline = since + limitMs; Date.now() < deadline; await delay(250)) {
    seen = await fleet.call<{ agents: number; lastAt: number | null }>('checkSetsSince', since);
    if (seen.agents >= agents) break;
  }
  // A few seconds more, so the heartbeats right after the last set are in the p99 too.
  await delay(5000);
  const loop = await server.call<LoopDelay>('delays');
  const { latencies, loopDelayMaxMs } = await fleet.call<{ latencies: number[]; loopDelayMaxMs: number }>('latencies');
  const failedTo = (await fleet.call<FleetChildStats>('stats')).heartbeatsFailed;
  return {
    reachAllMs: seen.agents >= agents && seen.lastAt !== null ? seen.lastAt - since : Number.NaN,
    putMs,
    agents,
    accepted: seen.agents,
    agentP99Ms: percentiles(latencies).p99,
    serverP99Ms: loop.heartbeatP99Ms,
    failedHeartbeats: failedTo - failedFrom,
    fleetLoopMaxMs: loopDelayMaxMs,
  };
}
