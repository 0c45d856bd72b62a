// The load generator, run as a child process (fork) so its CPU is not taken from the server's event loop.
// N clients, each a loop of sequential POSTs on its own keep-alive connection, cycling over its share
// of the agents (an agent never has two heartbeats in flight, as with real agents). Requests completed
// inside the measured window count; latency is from request start to the last response byte.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { heartbeatBodies, templateDocument, type HeartbeatBody } from './heartbeat-body.js';
import { percentile } from './stats.js';

export interface LoadRequest {
  url: string;
  apiKey: string;
  agentIds: string[];
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  fixture: string;
  bodyBytes: number;
}

export interface LoadResult {
  completed: number;
  errors: number;
  /** Status/message and body of the first failure, for the report. */
  firstError: string | undefined;
  ratePerS: number;
  p50Ms: number;
  p99Ms: number;
  bodyBytes: number;
  /** CPU seconds the client used per wall-clock second during the window (1.0 = one core). */
  clientCpu: number;
}

/** `measuring` and `measured` mark the window's start and end, so the server's CPU is read over the same window. */
export type ClientMessage = { type: 'measuring' } | { type: 'measured' } | { type: 'done'; result: LoadResult } | { type: 'failed'; error: string };

interface Reply {
  status: number;
  body: string;
}

function post(agent: http.Agent, url: URL, apiKey: string, body: Buffer): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': body.length, 'x-api-key': apiKey },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        // Success bodies are small and not inspected; keep failure bodies for the report.
        res.on('data', (chunk: Buffer) => status !== 200 && chunks.push(chunk));
        res.on('end', () => resolve({ status, body: Buffer.concat(chunks).toString('utf8').slice(0, 300) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export async function runLoad(request: LoadRequest, onMeasuring: () => void, onMeasured: () => void = () => undefined): Promise<LoadResult> {
  if (request.agentIds.length < request.concurrency) throw new Error('need at least one agent per client');
  const bodies = heartbeatBodies(templateDocument(request.fixture, request.bodyBytes), request.agentIds);
  const url = new URL(request.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: request.concurrency });
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;

  const start = performance.now();
  const windowStart = start + request.warmupMs;
  const windowEnd = windowStart + request.durationMs;
  let cpuAtStart: NodeJS.CpuUsage | undefined;
  const measuring = setTimeout(() => {
    cpuAtStart = process.cpuUsage();
    onMeasuring();
  }, request.warmupMs);
  // At the window's end, or when the clients stop if the timer comes later: the parent waits for it.
  let ended = false;
  const endWindow = () => {
    if (ended) return;
    ended = true;
    onMeasured();
  };
  const measured = setTimeout(endWindow, request.warmupMs + request.durationMs);

  const client = async (mine: HeartbeatBody[]) => {
    for (let i = 0; performance.now() < windowEnd; i = (i + 1) % mine.length) {
      const body = mine[i]!;
      body.touch(new Date());
      const t0 = performance.now();
      let failure: string | undefined;
      try {
        const reply = await post(agent, url, request.apiKey, body.bytes);
        if (reply.status !== 200) failure = `HTTP ${reply.status} ${reply.body}`;
      } catch (err) {
        failure = err instanceof Error ? err.message : String(err);
      }
      const t1 = performance.now();
      if (t1 < windowStart || t1 > windowEnd) continue;
      if (failure === undefined) latencies.push(t1 - t0);
      else {
        errors++;
        firstError ??= failure;
      }
    }
  };
  const shares = Array.from({ length: request.concurrency }, (_, c) =>
    bodies.filter((_b, i) => i % request.concurrency === c),
  );
  await Promise.all(shares.map(client));
  clearTimeout(measuring);
  clearTimeout(measured);
  endWindow();
  const cpu = process.cpuUsage(cpuAtStart);
  agent.destroy();

  latencies.sort((a, b) => a - b);
  return {
    completed: latencies.length,
    errors,
    firstError,
    ratePerS: latencies.length / (request.durationMs / 1000),
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    bodyBytes: bodies[0]?.bytes.length ?? 0,
    clientCpu: (cpu.user + cpu.system) / 1000 / request.durationMs,
  };
}

export const CHILD_FLAG = '--bench-load-client';

// As a forked child: one request in, progress and one result out, then exit.
if (process.send && process.argv.includes(CHILD_FLAG)) {
  const send = (m: ClientMessage) => process.send!(m);
  process.once('message', (request: LoadRequest) => {
    runLoad(request, () => send({ type: 'measuring' }), () => send({ type: 'measured' })).then(
      (result) => send({ type: 'done', result }),
      (err: unknown) => send({ type: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
    ).finally(() => process.disconnect());
  });
}
