// The agent side of the agent WebSocket (contract §5): holds one connection, reconnects with exponential
// backoff and full jitter (reconnect-delay.ts; reset after a connection that stayed up long enough), and
// drops a connection on which the server has been silent too long. It carries text and binary frames;
// what they mean is the caller's.
import WebSocket from 'ws';
import { MAX_MESSAGE_BYTES } from '../modules/agent-hub/agent-protocol.js';
import { nextReconnect } from './reconnect-delay.js';

export interface BackoffOptions {
  /** The first reconnect waits up to this long (up to 8× this after a lost connection); doubles per failed attempt. */
  initialMs: number;
  maxMs: number;
  /** A connection that lasted at least this long resets the delay to initialMs. */
  stableAfterMs: number;
  /** Uniform in [0, 1); the wait is random() times the current window (full jitter). */
  random: () => number;
}

export type SocketEvent =
  | { type: 'connected'; url: string }
  | { type: 'disconnected'; code: number; reason: string; durationMs: number }
  | { type: 'reconnect_scheduled'; attempt: number; delayMs: number }
  | { type: 'error'; message: string; status: number | null }
  | { type: 'silent'; silentMs: number };

/** The log line of a socket event. */
export function socketEventLine(event: SocketEvent): string {
  switch (event.type) {
    case 'connected':
      return 'connected';
    case 'disconnected': {
      const why = event.code === 4000 ? ' (replaced by another connection of this agent id)' : '';
      return `disconnected: code ${event.code}${event.reason ? ` ${event.reason}` : ''}${why}`;
    }
    case 'reconnect_scheduled':
      return `reconnecting in ${(event.delayMs / 1000).toFixed(1)} s (attempt ${event.attempt})`;
    case 'error':
      return `websocket error: ${event.message}`;
    case 'silent':
      return `no ping or message from the server for ${event.silentMs / 1000} s; reconnecting`;
  }
}

export interface AgentSocketOptions {
  /** Called before each attempt (the agent id may change after a re-registration). */
  url: () => string;
  apiKey: string;
  backoff: BackoffOptions;
  /** No ping or message from the server for this long: terminate and reconnect. */
  silenceTimeoutMs: number;
  /** Runs before each attempt; a rejection counts as a failed attempt. */
  beforeConnect?: () => Promise<void>;
  onText: (text: string) => void;
  onBinary?: (data: Buffer) => void;
  /** The new connection is open (tunnels send binary frames and apply backpressure on it directly). */
  onOpen?: (ws: WebSocket) => void;
  onEvent: (event: SocketEvent) => void;
}

const HANDSHAKE_TIMEOUT_MS = 10_000;
const CLOSE_GRACE_MS = 2_000;
/** A Retry-After longer than this is not believed (a misconfigured proxy must not park agents for days). */
const MAX_RETRY_AFTER_S = 3600;

export class AgentSocket {
  private ws: WebSocket | null = null;
  private running = false;
  /** Attempts since the last connection that stayed up long enough (the log's attempt number). */
  private failures = 0;
  /** Where the backoff ladder stands (reconnect-delay.ts): a lost connection lifts it, each wait climbs it. */
  private rung = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  /** The wait a refused upgrade asked for (Retry-After); the next reconnect waits at least this long. */
  private retryAfterMs = 0;
  private silenceTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: AgentSocketOptions) {}

  get connected(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  /** Starts connecting; from now on a lost connection is re-established until stop(). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.failures = 0;
    this.rung = 0;
    void this.attempt();
  }

  /** Closes the connection and stops reconnecting. Resolves when the socket is closed. */
  async stop(code = 1000, reason = 'agent stopping'): Promise<void> {
    this.running = false;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const ws = this.ws;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
      ws.once('close', () => {
        clearTimeout(force);
        resolve();
      });
      if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
      else ws.close(code, reason);
    });
  }

  /** Sends one text frame; false when no connection is open (the frame is lost). */
  send(text: string): boolean {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(text);
    return true;
  }

  private async attempt(): Promise<void> {
    this.reconnectTimer = undefined;
    if (!this.running) return;
    try {
      await this.options.beforeConnect?.();
    } catch (err) {
      this.options.onEvent({ type: 'error', message: (err as Error).message, status: null });
      this.scheduleReconnect(false);
      return;
    }
    if (!this.running) return;
    const url = this.options.url();
    const ws = new WebSocket(url, {
      headers: { 'X-API-Key': this.options.apiKey },
      maxPayload: MAX_MESSAGE_BYTES,
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
      perMessageDeflate: false,
      // `ws`'s default random masking key, as RFC 6455 requires of every client: the server pays the
      // unmasking that real agents make it pay, so the benchmarks measure it too (issue 36).
    });
    this.ws = ws;
    let openedAt: number | null = null;

    ws.on('open', () => {
      openedAt = Date.now();
      this.armSilenceTimer(ws);
      this.options.onOpen?.(ws);
      this.options.onEvent({ type: 'connected', url });
    });
    const heard = () => {
      if (this.ws === ws) this.silenceTimer?.refresh();
    };
    ws.on('ping', heard);
    ws.on('pong', heard);
    ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
      heard();
      const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      if (isBinary) this.options.onBinary?.(buffer);
      else this.options.onText(buffer.toString('utf8'));
    });
    let refused = false;
    // A refused upgrade: its status, and how long the server asks us to wait (429 and 503 say so).
    ws.on('unexpected-response', (_req, res) => {
      refused = true;
      const retryAfterS = Number(res.headers['retry-after']);
      if (Number.isFinite(retryAfterS) && retryAfterS > 0) this.retryAfterMs = Math.min(retryAfterS, MAX_RETRY_AFTER_S) * 1000;
      this.options.onEvent({ type: 'error', message: `Unexpected server response: ${res.statusCode}`, status: res.statusCode ?? null });
      res.resume();
      ws.terminate();
    });
    ws.on('error', (err) => {
      if (!refused) this.options.onEvent({ type: 'error', message: err.message, status: null });
    });
    ws.on('close', (code, reason) => {
      // Only the current socket may schedule: a late close of a replaced one must not start a second.
      const current = this.ws === ws;
      if (current) {
        this.ws = null;
        clearTimeout(this.silenceTimer);
        this.silenceTimer = undefined;
      }
      if (openedAt !== null) {
        const durationMs = Date.now() - openedAt;
        if (durationMs >= this.options.backoff.stableAfterMs) {
          this.failures = 0;
          this.rung = 0;
        }
        this.options.onEvent({ type: 'disconnected', code, reason: reason.toString(), durationMs });
      }
      if (current) this.scheduleReconnect(openedAt !== null);
    });
  }

  private armSilenceTimer(ws: WebSocket): void {
    clearTimeout(this.silenceTimer);
    const limit = this.options.silenceTimeoutMs;
    this.silenceTimer = setTimeout(() => {
      this.options.onEvent({ type: 'silent', silentMs: limit });
      ws.terminate();
    }, limit);
  }

  /** `afterDrop`: the connection had been open (not a failed attempt), so its whole instance may have lost theirs. */
  private scheduleReconnect(afterDrop: boolean): void {
    if (!this.running || this.reconnectTimer) return;
    const { delayMs, nextRung } = nextReconnect({
      ladder: this.options.backoff,
      rung: this.rung,
      afterDrop,
      retryAfterMs: this.retryAfterMs,
      random: this.options.backoff.random,
    });
    this.rung = nextRung;
    this.retryAfterMs = 0;
    this.failures += 1;
    this.options.onEvent({ type: 'reconnect_scheduled', attempt: this.failures, delayMs });
    this.reconnectTimer = setTimeout(() => void this.attempt(), delayMs);
  }
}
