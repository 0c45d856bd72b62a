// TCP tunnels through agents (contract §8): each tunnel listens on a free port of TUNNEL_PORT_MIN..MAX
// at TUNNEL_BIND_ADDRESS, and each accepted connection becomes a session that the agent connects to the
// target (`tunnel_connect`) before bytes flow as binary frames. A tunnel closes on DELETE, when its
// agent's socket goes away (or the agent is deleted), and after 30 minutes without sessions. A tunnel
// belongs to whoever opened it: its proxy port resets connections from outside its allow_from, and from
// other accounts on the server itself, before the agent hears of them (port-gate.ts), and its proxy
// WebSocket serves only the opening user or key. The remote-access launchers (issue 60) open tunnels on
// stricter terms (tunnel.ts): bound to one sign-in session, one session at once, closing with it or at a
// time limit, their bytes watched.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import { LogThrottle } from '../../platform/log-throttle.js';
import type { Logger } from '../../platform/logger.js';
import { PeriodicJob } from '../../platform/periodic-job.js';
import type { AgentHub } from '../agent-hub/agent-hub.js';
import { decodeTunnelFrame } from '../agent-hub/agent-protocol.js';
import type { Caller } from '../auth/caller.js';
import type { AllowList } from './allow-list.js';
import { TcpClient, type ClientEnd } from './client-end.js';
import type { LocalUids } from './local-peer.js';
import { PauseSupport } from './pause-support.js';
import { ProxyPortGate } from './port-gate.js';
import { TunnelSession, type CloseReason, type Overflow, type SessionLink } from './tunnel-session.js';
import { ownerOf, sessionOwnerOf, type Tunnel, type TunnelEnd, type TunnelTerms } from './tunnel.js';

const CONNECT_TIMEOUT_MS = 15_000;
const IDLE_LIMIT_MS = 30 * 60_000;

export interface TunnelOptions {
  bindAddress: string;
  portMin: number;
  portMax: number;
  /** Accounts besides the server's own whose connections from the server itself are let in (default: none). */
  localUids?: LocalUids;
}

export type { OpenedBy, Tunnel, TunnelEnd, TunnelPurpose, TunnelTerms } from './tunnel.js';

export class TunnelManager {
  readonly #tunnels = new Map<string, Tunnel>();
  /** Sessions of every tunnel by session id, for the agent's frames. */
  readonly #sessions = new Map<string, { tunnel: Tunnel; session: TunnelSession }>();
  readonly #pausing: PauseSupport;
  readonly #idleSweep: PeriodicJob;
  /** Sessions cut for a client that took too little: logged with why, but at most once a minute per tunnel. */
  readonly #cuts: LogThrottle;
  readonly #gate: ProxyPortGate;
  /** Bytes of the tunnels closed so far (Prometheus counts every byte relayed since the start). */
  readonly #closedTraffic = { bytesIn: 0, bytesOut: 0 };
  /** Told of every tunnel opened (`true`) and closed: in cluster mode, the instance answers for its tunnels on the bus. */
  onTunnelChange: (tunnel: Tunnel, open: boolean) => void = () => undefined;

  constructor(
    private readonly hub: AgentHub,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: TunnelOptions,
  ) {
    hub.onBinary = (agentId, frame) => this.#fromAgent(agentId, frame);
    hub.onTunnelClosed = (agentId, sessionId) => this.#targetClosed(agentId, sessionId);
    hub.onAgentGone = (agentId) => {
      this.#pausing.forget(agentId);
      this.closeAllOf(agentId);
    };
    // The agent's side of every session died with its old socket; the tunnels themselves stay.
    hub.onSocketReplaced = (agentId) => {
      this.#pausing.forget(agentId);
      for (const tunnel of this.list(agentId)) for (const session of [...tunnel.sessions.values()]) session.close('agent');
    };
    this.#pausing = new PauseSupport(hub, logger);
    this.#idleSweep = new PeriodicJob('tunnel idle sweep', clock, 60_000, logger, async () => this.#closeIdle());
    this.#gate = new ProxyPortGate(logger, options.localUids ?? []);
    this.#cuts = new LogThrottle(logger);
  }

  start(): void {
    this.#idleSweep.start();
  }

  async stop(): Promise<void> {
    await this.#idleSweep.stop();
    await Promise.all([...this.#tunnels.values()].map((t) => this.#close(t, 'server-stopping')));
    this.#gate.flush();
    this.#cuts.flush();
  }

  /** Opens a tunnel to `target` through the connected agent, for `openedBy` and clients from `allowFrom`. */
  async open(agentId: string, targetHost: string, targetPort: number, access: { allowFrom: AllowList; openedBy: Caller }, terms: TunnelTerms = {}): Promise<Tunnel> {
    if (!this.hub.isConnected(agentId)) throw new AppError('AGENT_NOT_CONNECTED', 'The agent is not connected');
    const caller = access.openedBy;
    if (terms.sessionBound && (caller.kind !== 'user' || !caller.sessionId)) throw new AppError('FORBIDDEN', 'This takes a signed-in user');
    const tunnel: Tunnel = {
      id: randomBytes(8).toString('hex'),
      agentId,
      port: 0,
      bindAddress: this.options.bindAddress,
      targetHost,
      targetPort,
      createdAt: this.clock.now(),
      allowFrom: access.allowFrom,
      openedBy: caller.kind === 'user' ? { type: 'user', name: caller.username, key_hint: null } : { type: 'api_key', name: caller.name, key_hint: caller.keyHint },
      owner: terms.sessionBound ? sessionOwnerOf(caller) : ownerOf(caller),
      refused: 0,
      sessions: new Map(),
      traffic: { bytesIn: 0, bytesOut: 0 },
      lastActivity: this.clock.now().getTime(),
      server: net.createServer((socket) =>
        this.#gate.screen(tunnel, socket, () => this.accept(tunnel, new TcpClient(socket)), () => this.#tunnels.has(tunnel.id)),
      ),
      purpose: terms.purpose ?? 'tunnel',
      expiresAt: terms.expiresAt ?? null,
      terms,
      cancelTimers: () => undefined,
    };
    tunnel.port = await this.#listenOnFreePort(tunnel.server);
    this.#tunnels.set(tunnel.id, tunnel);
    tunnel.cancelTimers = this.#startTimers(tunnel);
    this.onTunnelChange(tunnel, true);
    this.logger.info({ agentId, tunnelId: tunnel.id, port: tunnel.port, allowFrom: tunnel.allowFrom.entries }, 'tunnel opened');
    return tunnel;
  }

  /**
   * Whether `caller` is the user or API key that opened the tunnel (the only one its proxy WebSocket
   * serves); for a session-bound tunnel, that user's same sign-in session.
   */
  isOpenedBy(tunnel: Tunnel, caller: Caller): boolean {
    return tunnel.owner === (tunnel.terms.sessionBound ? sessionOwnerOf(caller) : ownerOf(caller));
  }

  list(agentId?: string): Tunnel[] {
    return [...this.#tunnels.values()].filter((t) => agentId === undefined || t.agentId === agentId);
  }

  /** A tunnel by its id alone (the proxy route checks the caller's scope on its agent). */
  find(tunnelId: string): Tunnel | undefined {
    return this.#tunnels.get(tunnelId);
  }

  get(agentId: string, tunnelId: string): Tunnel | undefined {
    const tunnel = this.#tunnels.get(tunnelId);
    return tunnel?.agentId === agentId ? tunnel : undefined;
  }

  async close(agentId: string, tunnelId: string): Promise<boolean> {
    const tunnel = this.get(agentId, tunnelId);
    if (!tunnel) return false;
    await this.#close(tunnel, 'closed');
    return true;
  }

  closeAllOf(agentId: string): void {
    for (const tunnel of this.list(agentId)) void this.#close(tunnel, 'agent-gone');
  }

  /**
   * Bytes in (client → target) and out (taken by clients) over the tunnel's life; bytes held for slow
   * clients now, and how many sessions the agent holds for them.
   */
  bytes(tunnel: Tunnel): { bytesIn: number; bytesOut: number; buffered: number; held: number } {
    let buffered = 0;
    let held = 0;
    for (const s of tunnel.sessions.values()) {
      buffered += s.buffered;
      if (s.held) held++;
    }
    return { bytesIn: tunnel.traffic.bytesIn, bytesOut: tunnel.traffic.bytesOut, buffered, held };
  }

  /** Open tunnels and their sessions, and the bytes relayed since the start (closed tunnels included). */
  totals(): { open: number; sessions: number; bytesIn: number; bytesOut: number } {
    let sessions = 0;
    let { bytesIn, bytesOut } = this.#closedTraffic;
    for (const t of this.#tunnels.values()) {
      sessions += t.sessions.size;
      bytesIn += t.traffic.bytesIn;
      bytesOut += t.traffic.bytesOut;
    }
    return { open: this.#tunnels.size, sessions, bytesIn, bytesOut };
  }

  /** Starts a session for a client connection (on the proxy port, or a WebSocket of the proxy route). */
  accept(tunnel: Tunnel, client: ClientEnd): void {
    const { maxSessions, watch } = tunnel.terms;
    if (!this.#tunnels.has(tunnel.id) || (maxSessions !== undefined && tunnel.sessions.size >= maxSessions)) {
      client.destroy();
      return;
    }
    const sessionId = randomBytes(12).toString('hex');
    const session = new TunnelSession(
      sessionId,
      client,
      this.#linkFor(tunnel.agentId),
      tunnel.traffic,
      (s, by, overflow) => this.#sessionClosed(tunnel, s, by, overflow),
      watch?.(),
    );
    tunnel.sessions.set(sessionId, session);
    this.#sessions.set(sessionId, { tunnel, session });
    tunnel.lastActivity = this.clock.now().getTime();
    const params = { session_id: sessionId, tunnel_id: tunnel.id, target_host: tunnel.targetHost, target_port: tunnel.targetPort };
    this.hub.request(tunnel.agentId, 'tunnel_connect', params, CONNECT_TIMEOUT_MS).then(
      () => session.start(),
      (err: unknown) => {
        this.logger.info({ err, tunnelId: tunnel.id }, 'the agent could not connect a tunnel session');
        session.close('tunnel');
      },
    );
  }

  #linkFor(agentId: string): SessionLink {
    return {
      send: (header, payload) => this.hub.sendBinary(agentId, header, payload),
      queued: () => this.hub.bufferedAmount(agentId),
      whenDrained: (resume) => this.hub.whenDrained(agentId, resume),
      pause: (sessionId) => this.#pausing.pause(agentId, sessionId),
      resume: (sessionId) => this.#pausing.resume(agentId, sessionId),
      canPause: () => this.#pausing.known(agentId),
    };
  }

  #fromAgent(agentId: string, frame: Buffer): void {
    const decoded = decodeTunnelFrame(frame);
    const entry = decoded && this.#sessions.get(decoded.sessionId);
    if (!decoded || !entry || entry.tunnel.agentId !== agentId) return; // malformed, late or foreign: dropped
    entry.tunnel.lastActivity = this.clock.now().getTime();
    entry.session.fromAgent(decoded.payload);
  }

  #targetClosed(agentId: string, sessionId: string): void {
    const entry = this.#sessions.get(sessionId);
    if (entry && entry.tunnel.agentId === agentId) entry.session.close('target');
  }

  #sessionClosed(tunnel: Tunnel, session: TunnelSession, by: CloseReason, overflow?: Overflow): void {
    tunnel.sessions.delete(session.id);
    this.#sessions.delete(session.id);
    tunnel.lastActivity = this.clock.now().getTime();
    if (overflow) this.#logCut(tunnel, session, overflow);
    if ((by === 'client' || by === 'tunnel' || by === 'overflow') && this.hub.isConnected(tunnel.agentId)) {
      // Fire and forget: the agent closes its side; its answer changes nothing here.
      this.hub.request(tunnel.agentId, 'tunnel_disconnect', { session_id: session.id }, CONNECT_TIMEOUT_MS).catch(() => undefined);
    }
    // A desktop's tunnel is its one session: the browser tab closing ends both.
    if (tunnel.terms.endsWithSession && tunnel.sessions.size === 0) void this.#close(tunnel, 'session-ended');
  }

  /** A remote-access tunnel's own deadlines: its time limit, and the time its first session has to start. */
  #startTimers(tunnel: Tunnel): () => void {
    const cancels: Array<() => void> = [];
    if (tunnel.expiresAt) {
      const ms = Math.max(0, tunnel.expiresAt.getTime() - this.clock.now().getTime());
      cancels.push(this.clock.timer(ms, () => void this.#close(tunnel, 'time-limit')));
    }
    const ends = tunnel.terms.endsWithSession;
    if (ends) cancels.push(this.clock.timer(ends.connectWithinMs, () => tunnel.sessions.size === 0 && void this.#close(tunnel, 'idle')));
    return () => cancels.forEach((cancel) => cancel());
  }

  /** Closes a tunnel because its user went idle (a desktop without keyboard or mouse for too long). */
  async closeIdle(tunnel: Tunnel): Promise<void> {
    await this.#close(tunnel, 'idle');
  }

  #logCut(tunnel: Tunnel, session: TunnelSession, { backlog, limit, agentCanPause }: Overflow): void {
    const why =
      agentCanPause === false
        ? `the agent cannot pause one session (no tunnel_pause), so at most ${limit / 1024 / 1024} MiB wait for a client`
        : `more than ${limit / 1024 / 1024} MiB waited although the agent was asked to pause the session`;
    this.#cuts.warn(
      `cut ${tunnel.id}`,
      { tunnelId: tunnel.id, agentId: tunnel.agentId, sessionId: session.id, backlog },
      `tunnel session reset: its client stopped taking the target's bytes and ${why}`,
    );
  }

  async #close(tunnel: Tunnel, end: TunnelEnd): Promise<void> {
    if (!this.#tunnels.delete(tunnel.id)) return;
    tunnel.cancelTimers();
    this.#closedTraffic.bytesIn += tunnel.traffic.bytesIn;
    this.#closedTraffic.bytesOut += tunnel.traffic.bytesOut;
    this.onTunnelChange(tunnel, false);
    for (const session of [...tunnel.sessions.values()]) session.close('tunnel');
    await new Promise<void>((resolve) => tunnel.server.close(() => resolve()));
    this.logger.info({ agentId: tunnel.agentId, tunnelId: tunnel.id, purpose: tunnel.purpose, end }, 'tunnel closed');
    try {
      tunnel.terms.onClose?.(tunnel, end);
    } catch (err) {
      this.logger.error({ err, tunnelId: tunnel.id }, 'a closed tunnel could not be recorded');
    }
  }

  #closeIdle(): void {
    const now = this.clock.now().getTime();
    for (const tunnel of this.#tunnels.values()) {
      if (tunnel.sessions.size === 0 && now - tunnel.lastActivity >= IDLE_LIMIT_MS) void this.#close(tunnel, 'idle');
    }
  }

  /** Listens on the first free port from a random start in the range, so tunnels spread out. */
  async #listenOnFreePort(server: net.Server): Promise<number> {
    const { portMin, portMax, bindAddress } = this.options;
    const span = portMax - portMin + 1;
    const start = Math.floor(Math.random() * span);
    const inUse = new Set([...this.#tunnels.values()].map((t) => t.port));
    for (let i = 0; i < span; i++) {
      const port = portMin + ((start + i) % span);
      if (inUse.has(port)) continue;
      const bound = await new Promise<boolean>((resolve) => {
        const onError = () => resolve(false);
        server.once('error', onError);
        server.listen({ port, host: bindAddress, exclusive: true }, () => {
          server.off('error', onError);
          resolve(true);
        });
      });
      if (bound) return port;
    }
    throw new AppError('NO_FREE_PORT', `No free tunnel port between ${portMin} and ${portMax}`);
  }
}
