// The storm client of socket-storm.ts, in a process of its own (so its CPU and event loop are not the
// prober's): opens agent WebSockets with a real key at a fixed rate (an open loop, like agents that do
// not wait for each other), closing each one as soon as it is open, for `durationMs`, the agents taken
// in turn. At most `maxInFlight` are under way; an opening that would exceed it is skipped and counted,
// so a slow server shows as a lower achieved rate, not as an ever longer queue in this process.
// Refused upgrades (401, 429, 503 …) and network errors are counted by kind.
import { setTimeout as delay } from 'node:timers/promises';
import WebSocket from 'ws';
import { serveRpcWhenForked } from './child-rpc.js';

export interface StormParams {
  url: string;
  apiKey: string;
  agentIds: string[];
  /** Sockets opened a second. */
  rate: number;
  maxInFlight: number;
  durationMs: number;
}

export interface StormResult {
  /** Sockets that opened (and were closed again at once). */
  opened: number;
  /** Upgrades answered with an HTTP status instead, by status. */
  refused: Record<string, number>;
  /** Connections that failed without an answer (reset, refused, timeout). */
  errors: number;
  /** Openings not started because `maxInFlight` were still under way. */
  skipped: number;
  elapsedMs: number;
  /** The storm client's own CPU, for the record. */
  clientCpuMs: number;
}

const OPEN_TIMEOUT_MS = 15_000;
const TICK_MS = 5;

type Outcome = { kind: 'opened' } | { kind: 'refused'; status: number } | { kind: 'error' };

/** One connect-and-close: resolves when the socket is closed again (or failed). */
function openAndClose(wsUrl: string, apiKey: string): Promise<Outcome> {
  return new Promise((resolve) => {
    let outcome: Outcome = { kind: 'error' };
    const ws = new WebSocket(wsUrl, { headers: { 'x-api-key': apiKey }, handshakeTimeout: OPEN_TIMEOUT_MS, perMessageDeflate: false });
    ws.on('open', () => {
      outcome = { kind: 'opened' };
      ws.close(1000);
    });
    ws.on('unexpected-response', (_req, res) => {
      outcome = { kind: 'refused', status: res.statusCode ?? 0 };
      res.resume();
      ws.terminate();
    });
    ws.on('error', () => undefined); // the outcome says it; 'close' follows
    ws.on('close', () => resolve(outcome));
  });
}

async function storm(params: StormParams): Promise<StormResult> {
  const result: StormResult = { opened: 0, refused: {}, errors: 0, skipped: 0, elapsedMs: 0, clientCpuMs: 0 };
  const base = params.url.replace(/^http/, 'ws');
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const running = new Set<Promise<void>>();
  let next = 0;
  const openOne = () => {
    const agentId = params.agentIds[next++ % params.agentIds.length]!;
    const attempt: Promise<void> = openAndClose(`${base}/api/v1/agent/ws?agent_id=${agentId}`, params.apiKey).then((outcome) => {
      running.delete(attempt);
      if (outcome.kind === 'opened') result.opened++;
      else if (outcome.kind === 'refused') result.refused[outcome.status] = (result.refused[outcome.status] ?? 0) + 1;
      else result.errors++;
    });
    running.add(attempt);
  };
  // Every TICK_MS, the openings due by then: the rate holds even when a tick comes late.
  let due = 0;
  while (performance.now() - started < params.durationMs) {
    const shouldHave = Math.floor(((performance.now() - started) / 1000) * params.rate);
    for (; due < shouldHave; due++) {
      if (running.size >= params.maxInFlight) result.skipped++;
      else openOne();
    }
    await delay(TICK_MS);
  }
  await Promise.all(running);
  result.elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  result.clientCpuMs = (cpu.user + cpu.system) / 1000;
  return result;
}

serveRpcWhenForked({ storm });
