// The agent hub: one live WebSocket per agent and every command in flight. A command gets an id, waits
// in the pending map with a timer on the injected clock, and is settled exactly once: by the agent's
// answer on the socket it was sent on, by its timeout, by that socket closing, or by stop(). Frames that
// do not parse are dropped and counted; nothing an agent sends can throw into the event loop.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import { LogThrottle } from '../../platform/log-throttle.js';
import type { Logger } from '../../platform/logger.js';
import { PeriodicJob } from '../../platform/periodic-job.js';
import type { AgentConnections } from '../agents/agents.service.js';
import type { AgentCommander } from './agent-commander.js';
import { agentFrameSchema, isTunnelFrame, parseFrame, type AgentCommand, type CommandParams } from './agent-protocol.js';
import { knownCapabilities, type DeviceCapability } from './device-protocol.js';
import type { CheckResultsFrame } from '../checks/check-protocol.js';
import { DeviceStreams } from './device-streams.js';
import { DrainWatch } from './drain-watch.js';
import type { HubSocket } from './hub-socket.js';
import { sendTwoParts } from './two-part-send.js';

/** Tunnel clients paused for a full agent send queue resume once it is down to this. */
export const SEND_QUEUE_LOW_WATER = 512 * 1024;

/** Keep-alive pings go out this many sockets at a time, PING_GAP_MS apart (5,000 pings/s at most). */
const PING_BATCH = 250;
const PING_GAP_MS = 50;

const OPEN = 1;
export const CLOSE_REPLACED = 4000;
export const CLOSE_AGENT_DELETED = 4004;

export type ConnectionEventType = 'connected' | 'disconnected';

export interface AgentHubOptions {
  pingIntervalMs?: number;
  /** A socket with no frame and no pong for this long is dropped. */
  silenceLimitMs?: number;
  /** Repeated warnings (malformed frames of one agent, failed event writes) are logged once per window (default 60 s). */
  logWindowMs?: number;
  /** Records connected/disconnected events (failures are logged, never thrown). */
  recordEvent(agentId: string, type: ConnectionEventType, at: Date): Promise<void>;
  /**
   * Told when this hub starts holding an agent's live socket (`true`) and when it stops (`false`),
   * replaced sockets excluded: cluster mode's presence and command routing (issue 32). A socket that
   * closed comes with its `disconnected` event's recording, which settles once the event is written.
   */
  onPresence?(agentId: string, holding: boolean, recorded?: Promise<void>): void;
  /** An agent's socket announced what it can do beyond the spec's commands (its hello frame). */
  onCapabilities?(agentId: string, capabilities: DeviceCapability[]): void;
  /** An agent sent results of its checks (issue 61). */
  onCheckResults?(agentId: string, frame: CheckResultsFrame): void;
}

interface LiveAgent {
  agentId: string;
  socket: HubSocket;
  /** Wakes tunnel sessions waiting for the send queue to shrink. */
  drain: DrainWatch;
  connectedAt: Date;
  lastSeen: number;
  remoteAddress: string;
  /** From the agent's hello frame; null until one came (an agent that predates them never sends one). */
  capabilities: DeviceCapability[] | null;
}

interface Pending {
  live: LiveAgent;
  command: AgentCommand;
  /** Cancels the timeout. */
  cancelTimer(): void;
  resolve(data: unknown): void;
  reject(err: AppError): void;
}

export interface HubStatus {
  agents: Array<{ agent_id: string; connected_at: string; last_seen: string; remote_address: string; pending_commands: number }>;
  pending_commands: number;
  dropped_frames: number;
  unknown_responses: number;
}

export class AgentHub implements AgentCommander, AgentConnections {
  readonly #live = new Map<string, LiveAgent>();
  readonly #pending = new Map<string, Pending>();
  readonly #keepAlive: PeriodicJob;
  readonly #silenceLimitMs: number;
  #droppedFrames = 0;
  #unknownResponses = 0;
  /** Lines an agent (or a database outage under every agent) could otherwise repeat without bound. */
  readonly #logs: LogThrottle;
  #stopping = false;
  /** Who waits for an agent's next connection (task health checks). */
  readonly #connectWaiters = new Map<string, Set<() => void>>();
  readonly #recording = new Set<Promise<unknown>>();
  /** Device sessions' streams on these sockets (shell, file transfers); tunnels keep their own. */
  readonly streams = new DeviceStreams(this);
  /** Binary frames and tunnel_closed notices go to the tunnel feature once it registers. */
  onBinary: (agentId: string, frame: Buffer) => void = () => undefined;
  onTunnelClosed: (agentId: string, sessionId: string) => void = () => undefined;
  /** Called when an agent's live socket is gone (closed, replaced sockets excluded, or deleted). */
  onAgentGone: (agentId: string) => void = () => undefined;
  /** Called when a new socket replaces the agent's old one: what lived on the old socket is gone. */
  onSocketReplaced: (agentId: string) => void = () => undefined;

  constructor(
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: AgentHubOptions,
  ) {
    this.#silenceLimitMs = options.silenceLimitMs ?? 90_000;
    this.#logs = new LogThrottle(logger, { windowMs: options.logWindowMs ?? 60_000 });
    this.#keepAlive = new PeriodicJob('agent keep-alive', clock, options.pingIntervalMs ?? 30_000, logger, (signal) => this.#pingAll(signal));
  }

  start(): void {
    this.#stopping = false;
    this.#keepAlive.start();
  }

  /** Rejects every command in flight, closes every socket (1001), and ends the keep-alive loop. */
  async stop(): Promise<void> {
    this.#stopping = true;
    for (const id of [...this.#pending.keys()]) this.#settle(id, new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down'));
    // Record the disconnects now (the database closes after the app), then close the sockets.
    for (const live of [...this.#live.values()]) {
      this.#detach(live);
      live.socket.close(1001, 'server shutting down');
    }
    this.streams.stopAll();
    await this.#keepAlive.stop();
    await Promise.all(this.#recording);
    this.#logs.flush();
  }

  isConnected(agentId: string): boolean {
    return this.#live.get(agentId)?.socket.readyState === OPEN;
  }

  /** What the agent's live socket announced it can do; null when not connected here or it said nothing. */
  /** The agents whose sockets this hub holds. */
  connectedIds(): string[] {
    return [...this.#live.keys()];
  }

  capabilities(agentId: string): DeviceCapability[] | null {
    return this.#live.get(agentId)?.capabilities ?? null;
  }

  /** Takes over a freshly upgraded socket; an older socket of the same agent is closed with 4000. */
  attach(agentId: string, socket: HubSocket, remoteAddress: string): void {
    const live: LiveAgent = {
      agentId,
      socket,
      drain: new DrainWatch(socket, SEND_QUEUE_LOW_WATER),
      connectedAt: this.clock.now(),
      lastSeen: this.clock.now().getTime(),
      remoteAddress,
      capabilities: null,
    };
    const previous = this.#live.get(agentId);
    this.#live.set(agentId, live);
    this.options.onPresence?.(agentId, true);
    socket.on('message', (data, isBinary) => this.#receive(live, data, isBinary));
    socket.on('pong', () => {
      live.lastSeen = this.clock.now().getTime();
    });
    socket.on('error', (err) => this.logger.debug({ err, agentId }, 'agent socket error'));
    socket.on('close', () => this.#detach(live));
    if (previous) {
      previous.socket.close(CLOSE_REPLACED, 'replaced by a new connection');
      this.streams.agentGone(agentId);
      this.onSocketReplaced(agentId);
    }
    this.#record(agentId, 'connected');
    for (const wake of [...(this.#connectWaiters.get(agentId) ?? [])]) wake();
    if (this.#stopping) socket.close(1001, 'server shutting down');
  }

  /**
   * Waits up to `ms` for the agent to open a new connection (after an update or reboot); true when it
   * did. `signal` ends the wait early (false).
   */
  async nextConnection(agentId: string, ms: number, signal?: AbortSignal): Promise<boolean> {
    const timer = new AbortController();
    const stop = () => timer.abort();
    signal?.addEventListener('abort', stop, { once: true });
    let connected = false;
    const wake = () => {
      connected = true;
      timer.abort();
    };
    const waiters = this.#connectWaiters.get(agentId) ?? new Set();
    this.#connectWaiters.set(agentId, waiters.add(wake));
    try {
      await this.clock.sleep(ms, timer.signal);
    } catch {
      // woken by a connection, or cancelled
    } finally {
      waiters.delete(wake);
      if (waiters.size === 0) this.#connectWaiters.delete(agentId);
      signal?.removeEventListener('abort', stop);
    }
    return connected;
  }

  /** Closes the agent's socket (agent deleted); its pending commands fail as disconnected. */
  disconnect(agentId: string): void {
    const live = this.#live.get(agentId);
    if (!live) return;
    // Forgotten first: a deleted agent gets no `disconnected` event (its events are gone with it).
    this.#live.delete(agentId);
    this.options.onPresence?.(agentId, false);
    live.socket.close(CLOSE_AGENT_DELETED, 'agent deleted');
    this.streams.agentGone(agentId);
    this.onAgentGone(agentId);
  }

  /**
   * The agent opened a new socket on another server instance: this one is closed with 4000, as a
   * socket replaced here would be, and is no disconnect (the agent is still there, elsewhere).
   */
  replacedElsewhere(agentId: string): void {
    const live = this.#live.get(agentId);
    if (!live) return;
    this.#live.delete(agentId);
    this.options.onPresence?.(agentId, false);
    live.socket.close(CLOSE_REPLACED, 'replaced by a new connection');
    this.streams.agentGone(agentId);
    this.onAgentGone(agentId);
  }

  /** Bytes waiting to go out on the agent's socket (0 when not connected): the tunnels' backpressure signal. */
  bufferedAmount(agentId: string): number {
    return this.#live.get(agentId)?.socket.bufferedAmount ?? 0;
  }

  /** Calls `resume` once the agent's send queue is down to SEND_QUEUE_LOW_WATER, or the agent is gone. */
  whenDrained(agentId: string, resume: () => void): void {
    const live = this.#live.get(agentId);
    if (live) live.drain.whenDrained(resume);
    else queueMicrotask(resume);
  }

  /** Sends one binary message, `header` then `payload` (not joined: see two-part-send.ts); false when the agent is not connected. */
  sendBinary(agentId: string, header: Buffer, payload: Buffer): boolean {
    const live = this.#live.get(agentId);
    if (live?.socket.readyState !== OPEN) return false;
    sendTwoParts(live.socket, header, payload, live.drain.sent);
    return true;
  }

  request<C extends AgentCommand>(agentId: string, command: C, params: CommandParams<C>, timeoutMs: number): Promise<unknown> {
    const live = this.#live.get(agentId);
    if (this.#stopping) return Promise.reject(new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down'));
    if (live?.socket.readyState !== OPEN) {
      return Promise.reject(new AppError('AGENT_NOT_CONNECTED', 'The agent is not connected'));
    }
    const id = randomUUID();
    return new Promise((resolve, reject) => {
      const cancelTimer = this.clock.timer(timeoutMs, () =>
        this.#settle(id, new AppError('AGENT_TIMEOUT', `The agent did not answer ${command} within ${Math.round(timeoutMs / 1000)} s`)),
      );
      this.#pending.set(id, { live, command, cancelTimer, resolve, reject });
      live.socket.send(JSON.stringify({ type: 'command', id, command, params }), (err) => {
        live.drain.sent();
        if (err) this.#settle(id, new AppError('AGENT_DISCONNECTED', 'The agent disconnected before the command was sent'));
      });
    });
  }

  status(): HubStatus {
    const perAgent = new Map<LiveAgent, number>();
    for (const p of this.#pending.values()) perAgent.set(p.live, (perAgent.get(p.live) ?? 0) + 1);
    return {
      agents: [...this.#live.values()]
        .map((l) => ({
          agent_id: l.agentId,
          connected_at: l.connectedAt.toISOString(),
          last_seen: new Date(l.lastSeen).toISOString(),
          remote_address: l.remoteAddress,
          pending_commands: perAgent.get(l) ?? 0,
        }))
        .sort((a, b) => a.agent_id.localeCompare(b.agent_id)),
      pending_commands: this.#pending.size,
      dropped_frames: this.#droppedFrames,
      unknown_responses: this.#unknownResponses,
    };
  }

  #receive(live: LiveAgent, data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
    live.lastSeen = this.clock.now().getTime();
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    if (isBinary) {
      if (!isTunnelFrame(bytes)) this.#dropped(live, 'binary frame without a session id');
      else if (!this.streams.binary(live.agentId, bytes)) this.onBinary(live.agentId, bytes);
      return;
    }
    const parsed = parseFrame(agentFrameSchema, bytes.toString('utf8'));
    if (!parsed.ok) {
      this.#dropped(live, parsed.reason);
      return;
    }
    const frame = parsed.frame;
    if (frame.type === 'tunnel_closed') {
      this.onTunnelClosed(live.agentId, frame.session_id);
      return;
    }
    if (frame.type === 'session_closed') {
      if (!this.streams.closed(live.agentId, frame)) this.logger.debug({ agentId: live.agentId, sessionId: frame.session_id }, 'session_closed for no open stream');
      return;
    }
    if (frame.type === 'check_results') {
      this.options.onCheckResults?.(live.agentId, frame);
      return;
    }
    if (frame.type === 'hello') {
      live.capabilities = knownCapabilities(frame.capabilities);
      this.options.onCapabilities?.(live.agentId, live.capabilities);
      return;
    }
    const pending = this.#pending.get(frame.id);
    // Only the socket a command went out on may answer it: another agent guessing ids settles nothing.
    if (!pending || pending.live !== live) {
      this.#unknownResponses++;
      this.logger.debug({ agentId: live.agentId, id: frame.id }, 'ignored an answer to no pending command');
      return;
    }
    if (frame.success) this.#settle(frame.id, frame.data ?? null);
    else this.#settle(frame.id, new AppError('AGENT_ERROR', `The agent reported an error: ${(frame.error ?? 'no reason given').slice(0, 2000)}`));
  }

  /** Counts a frame that does not parse; its log line is one per agent and minute, with a count of the rest. */
  #dropped(live: LiveAgent, reason: string): void {
    this.#droppedFrames++;
    this.#logs.warn(`malformed:${live.agentId}`, { agentId: live.agentId, reason }, 'dropped a malformed frame from an agent');
  }

  #settle(id: string, outcome: unknown): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    this.#pending.delete(id);
    pending.cancelTimer();
    if (outcome instanceof AppError) pending.reject(outcome);
    else pending.resolve(outcome);
  }

  #detach(live: LiveAgent): void {
    live.drain.release();
    for (const [id, p] of this.#pending) {
      if (p.live === live) this.#settle(id, new AppError('AGENT_DISCONNECTED', `The agent disconnected before answering ${p.command}`));
    }
    // A replaced socket closing is not a disconnect: the agent is still there on its new socket.
    if (this.#live.get(live.agentId) !== live) return;
    this.#live.delete(live.agentId);
    this.options.onPresence?.(live.agentId, false, this.#record(live.agentId, 'disconnected'));
    this.streams.agentGone(live.agentId);
    this.onAgentGone(live.agentId);
  }

  /**
   * Pings every socket and drops the silent ones, PING_BATCH at a time and PING_GAP_MS apart: pinging
   * 10,000 sockets in one go held the server up for 100–230 ms every round, and their 10,000 pongs all
   * arrived at once. (A round then takes 2 s longer per 10,000 agents; the silence limit is 3 rounds.)
   */
  async #pingAll(signal: AbortSignal): Promise<void> {
    let inBatch = 0;
    let now = this.clock.now().getTime();
    for (const live of [...this.#live.values()]) {
      if (this.#stopping || signal.aborted) return;
      if (now - live.lastSeen > this.#silenceLimitMs) {
        this.logger.info({ agentId: live.agentId }, 'dropping a silent agent socket');
        live.socket.terminate();
      } else if (live.socket.readyState === OPEN) {
        live.socket.ping();
      }
      if (++inBatch === PING_BATCH) {
        inBatch = 0;
        // A real timer, not the clock: spacing is about load, and tests drive the clock in whole rounds.
        await sleep(PING_GAP_MS, undefined, { signal }).catch(() => undefined);
        now = this.clock.now().getTime();
      }
    }
  }

  #record(agentId: string, type: ConnectionEventType): Promise<void> {
    const recording: Promise<void> = this.options
      .recordEvent(agentId, type, this.clock.now())
      .catch((err: unknown) => this.#logs.warn('connection-event', { err, agentId, type }, 'could not record a connection event'))
      .finally(() => this.#recording.delete(recording));
    this.#recording.add(recording);
    return recording;
  }
}
