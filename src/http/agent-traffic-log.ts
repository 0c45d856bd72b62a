// Request logging that an MSP can leave at `info`: a fleet of 10,000 agents heartbeats 167 times a
// second, and Fastify's two lines per request (incoming, completed) made agents' traffic almost all of
// the log and a measurable share of a heartbeat's CPU. Agent traffic (routes declared `access: 'agent'`
// or `'agent_key'`) therefore logs its per-request lines at `debug`, and once a minute one `info` line
// sums it up: requests, heartbeats, p50/p99 response time, 4xx and 5xx.
//
// People's requests get one `info` line each, written when the answer is out: `request completed` (or
// `request errored`) with the request, the status and the response time, like an access log. Fastify's
// `incoming request` line before it said nothing the completed line does not, and cost a write of its
// own on every request (B2, seven interleaved runs: the server's CPU per command 2.29 → 2.20× the echo
// server's, p50 1.42 → 1.34×; bench/README.md, 2026-11-27 evening); it is at `debug`. Two kinds of
// request have no completed line, so they keep a line of their own: a WebSocket session (a terminal, a
// tunnel) logs `incoming request` at `info` when it opens, and a request whose client went away before
// the answer logs `request aborted`.
// Server errors keep their own `error` line from the error handler whatever the route.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from '../platform/logger.js';
import { percentiles } from '../platform/percentiles.js';

/** At most this many response times are kept per minute for the percentiles (then every other one). */
const MAX_SAMPLES = 20_000;
export const SUMMARY_INTERVAL_MS = 60_000;
const HEARTBEAT_PATH_SUFFIX = '/agent/heartbeat';

export interface AgentTrafficSummary {
  agent_requests: number;
  heartbeats: number;
  p50_ms: number;
  p99_ms: number;
  client_errors: number;
  server_errors: number;
}

function isAgentTraffic(request: FastifyRequest): boolean {
  const access = request.routeOptions.config?.access;
  return access === 'agent' || access === 'agent_key';
}

/** Counts agent requests between two summaries. */
class AgentTrafficTally {
  private requests = 0;
  private heartbeats = 0;
  private clientErrors = 0;
  private serverErrors = 0;
  private samples: number[] = [];
  private keepEvery = 1;

  record(path: string | undefined, statusCode: number, ms: number): void {
    this.requests += 1;
    if (path?.endsWith(HEARTBEAT_PATH_SUFFIX)) this.heartbeats += 1;
    if (statusCode >= 500) this.serverErrors += 1;
    else if (statusCode >= 400) this.clientErrors += 1;
    // Bounded memory on a busy minute: past the cap, keep every 2nd, then every 4th sample… (still a
    // uniform sample of the minute for the percentiles).
    if (this.requests % this.keepEvery !== 0) return;
    this.samples.push(ms);
    if (this.samples.length >= MAX_SAMPLES) {
      this.samples = this.samples.filter((_, i) => i % 2 === 0);
      this.keepEvery *= 2;
    }
  }

  /** The minute's figures, and a fresh start; undefined when no agent called. */
  take(): AgentTrafficSummary | undefined {
    if (this.requests === 0) return undefined;
    const { p50, p99 } = percentiles(this.samples);
    const summary = {
      agent_requests: this.requests,
      heartbeats: this.heartbeats,
      p50_ms: Math.round(p50 * 10) / 10,
      p99_ms: Math.round(p99 * 10) / 10,
      client_errors: this.clientErrors,
      server_errors: this.serverErrors,
    };
    this.requests = this.heartbeats = this.clientErrors = this.serverErrors = 0;
    this.samples = [];
    this.keepEvery = 1;
    return summary;
  }
}

export class AgentTrafficLogController extends LogController {
  private readonly tally = new AgentTrafficTally();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly logger: Logger) {
    super();
  }

  override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
    if (isAgentTraffic(request)) {
      if (this.logger.isLevelEnabled('debug')) request.log.debug({ req: request }, 'incoming request');
      return;
    }
    // An upgrade to a WebSocket (@fastify/websocket sets request.ws only later, in its onRequest hook)
    // is answered over HTTP only when refused: an accepted session would have no line at all.
    if (request.headers.upgrade !== undefined) return request.log.info({ req: request }, 'incoming request');
    if (this.logger.isLevelEnabled('debug')) request.log.debug({ req: request }, 'incoming request');
    // The answer not ended when the response closes: the client left first.
    reply.raw.once('close', () => {
      if (!reply.raw.writableEnded) reply.log.info({ req: request, responseTime: reply.elapsedTime }, 'request aborted');
    });
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (!isAgentTraffic(request)) {
      if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
      else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
      return;
    }
    this.tally.record(request.routeOptions.url, reply.statusCode, reply.elapsedTime);
    if (error) reply.log.error({ res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else if (this.logger.isLevelEnabled('debug')) reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }

  /** Logs the figures since the last summary (nothing when no agent called). */
  logSummary(): AgentTrafficSummary | undefined {
    const summary = this.tally.take();
    if (summary) this.logger.info({ agent_traffic: summary }, 'agent traffic in the last minute');
    return summary;
  }

  start(intervalMs = SUMMARY_INTERVAL_MS): void {
    this.timer ??= setInterval(() => this.logSummary(), intervalMs).unref();
  }

  /** Stops the timer and logs what the last partial minute saw. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.logSummary();
  }
}
