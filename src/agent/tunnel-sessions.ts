// The agent side of tunnels (contract §5, §8): one TCP connection to a target per session id, bytes carried
// in binary frames over the agent WebSocket, and backpressure both ways so neither side buffers without
// bound. The server may also hold one session's target (tunnel_pause/tunnel_resume) while that session's
// client is slow, so it never has to pause the whole WebSocket. One instance per agent; sessions live on
// the WebSocket they were opened on and die with it.
import net from 'node:net';
import WebSocket from 'ws';
import { decodeTunnelFrame, tunnelFrameReads, type CommandParams } from '../modules/agent-hub/agent-protocol.js';
import { DrainWatch } from '../modules/agent-hub/drain-watch.js';
import { CommandError } from './commands/command-error.js';

export interface TunnelSessionsOptions {
  /** A target that has not accepted the connection by then fails the tunnel_connect (default 10 s). */
  connectTimeoutMs?: number;
  /** Target reading pauses while the WebSocket has more than this queued (default 1 MiB) … */
  highWaterBytes?: number;
  /** … and resumes once it is below this (default 256 KiB). */
  lowWaterBytes?: number;
  log?: (line: string) => void;
  /**
   * Where a tunnel to host:port really goes. The fleet simulator sends its devices' VNC default
   * (127.0.0.1:5900) to its built-in test screen; a real agent connects where the server says.
   */
  tunnelTargets?: (host: string, port: number) => { host: string; port: number };
}

interface Session {
  id: string;
  ws: WebSocket;
  /** The send-queue watch of `ws`. */
  drain: DrainWatch;
  target: net.Socket;
  /** Reading from the target is paused until the WebSocket drains. */
  paused: boolean;
  /** The server asked to stop reading the target (tunnel_pause) until tunnel_resume. */
  held: boolean;
  /** A write to the target returned false; the WebSocket is paused until the target drains. */
  blocking: boolean;
}

export class TunnelSessions {
  private readonly sessions = new Map<string, Session>();
  private ws: WebSocket | null = null;
  private drain: DrainWatch | null = null;
  private readonly connectTimeoutMs: number;
  private readonly highWater: number;
  private readonly lowWater: number;
  private readonly log: (line: string) => void;
  private readonly targets: ((host: string, port: number) => { host: string; port: number }) | undefined;

  constructor(options: TunnelSessionsOptions = {}) {
    this.targets = options.tunnelTargets;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.highWater = options.highWaterBytes ?? 1024 * 1024;
    this.lowWater = options.lowWaterBytes ?? 256 * 1024;
    this.log = options.log ?? (() => undefined);
  }

  /** Number of open (or connecting) sessions. */
  get size(): number {
    return this.sessions.size;
  }

  /** True while reading from the WebSocket is paused because a target does not keep up. */
  get inboundPaused(): boolean {
    return [...this.sessions.values()].some((s) => s.blocking);
  }

  /** True while reading from this session's target is paused because the WebSocket does not drain. */
  isTargetPaused(sessionId: string): boolean {
    return this.sessions.get(sessionId)?.paused ?? false;
  }

  /** tunnel_pause: stop reading the session's target. An unknown session is no error (the server may race its end). */
  hold(sessionId: string): void {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    session.held = true;
    session.target.pause();
  }

  /** tunnel_resume: read the session's target again, unless the WebSocket itself is still full. */
  release(sessionId: string): void {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    session.held = false;
    this.readTarget(session);
  }

  /** Uses `ws` from now on; when it closes, every session opened on it is destroyed. */
  attach(ws: WebSocket): void {
    const drain = new DrainWatch(ws, this.lowWater);
    this.ws = ws;
    this.drain = drain;
    ws.once('close', () => {
      if (this.ws === ws) {
        this.ws = null;
        this.drain = null;
      }
      this.closeAll(ws);
      drain.release();
    });
  }

  /** tunnel_connect: resolves once the target accepted the connection; rejects with the reason otherwise. */
  connect(params: CommandParams<'tunnel_connect'>): Promise<void> {
    const { session_id: id, target_host: host, target_port: port } = params;
    const { ws, drain } = this;
    if (!ws || !drain || ws.readyState !== WebSocket.OPEN) return Promise.reject(new CommandError('not connected to the server'));
    if (this.sessions.has(id)) return Promise.reject(new CommandError(`tunnel session ${id} already exists`));
    // Reading starts only after the answer went out, so no data frame precedes the `{}` answer.
    // The target's bytes are read straight into frames (reads are at most TUNNEL_READ_BYTES, far below
    // the message limit), and go out once wire() has run.
    const to = this.targets?.(host, port) ?? { host, port };
    const target = net.connect({ host: to.host, port: to.port, noDelay: true, onread: tunnelFrameReads(id, (frame) => this.sendFrame(session, frame)) });
    target.pause();
    const session: Session = { id, ws, drain, target, paused: false, held: false, blocking: false };
    this.sessions.set(id, session);
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const fail = (reason: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.forget(session);
        target.destroy();
        reject(new CommandError(`cannot connect to ${host}:${port}: ${reason}`));
      };
      const timer = setTimeout(() => fail(`timed out after ${this.connectTimeoutMs / 1000} s`), this.connectTimeoutMs);
      target.on('error', (err) => fail(err.message));
      target.once('close', () => fail('the session was closed while connecting'));
      target.once('connect', () => {
        if (this.sessions.get(id) !== session || ws.readyState !== WebSocket.OPEN) return fail('the server connection closed');
        settled = true;
        clearTimeout(timer);
        target.removeAllListeners('error').removeAllListeners('close');
        this.wire(session);
        resolve();
        setImmediate(() => this.readTarget(session));
      });
    });
  }

  /** tunnel_disconnect: the server ended the session; no tunnel_closed is sent for it. */
  disconnect(sessionId: string): void {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    this.forget(session);
    session.target.destroy();
  }

  /** One binary frame from the server: its payload goes to the session's target; bad frames are dropped. */
  handleBinary(frame: Buffer): void {
    const decoded = decodeTunnelFrame(frame);
    const session = decoded ? this.sessions.get(decoded.sessionId) : undefined;
    if (!decoded || !session) {
      this.log(decoded ? `dropped a tunnel frame for unknown session ${decoded.sessionId}` : 'dropped a malformed tunnel frame');
      return;
    }
    if (decoded.payload.length === 0 || session.target.destroyed) return;
    session.target.write(decoded.payload);
    // Deeper than the socket's own 16 KiB mark, so the WebSocket (shared by all sessions) pauses
    // rarely; past it write() returned false, so 'drain' will come.
    if (session.target.writableLength <= this.highWater || session.blocking) return;
    session.blocking = true;
    session.ws.pause();
    session.target.once('drain', () => this.unblock(session));
  }

  /** Destroys every session (of `ws` only, when given). */
  closeAll(ws?: WebSocket): void {
    for (const session of [...this.sessions.values()]) {
      if (ws && session.ws !== ws) continue;
      this.forget(session);
      session.target.destroy();
    }
  }

  private wire(session: Session): void {
    const { target, id } = session;
    target.on('error', (err) => this.log(`tunnel session ${id}: ${err.message}`));
    target.on('close', () => {
      if (this.sessions.get(id) !== session) return; // disconnected by the server or the WebSocket closed
      this.forget(session);
      if (session.ws.readyState === WebSocket.OPEN) session.ws.send(JSON.stringify({ type: 'tunnel_closed', session_id: id }));
    });
  }

  private sendFrame(session: Session, frame: Buffer): void {
    const { ws, target, drain } = session;
    if (ws.readyState !== WebSocket.OPEN || this.sessions.get(session.id) !== session) return;
    ws.send(frame, drain.sent);
    if (ws.bufferedAmount > this.highWater && !session.paused) {
      session.paused = true;
      target.pause();
      drain.whenDrained(() => {
        if (!session.paused) return; // forgotten meanwhile
        session.paused = false;
        this.readTarget(session);
      });
    }
  }

  /** Reads the target again unless the WebSocket is full or the server holds the session. */
  private readTarget(session: Session): void {
    if (!session.paused && !session.held && !session.target.destroyed) session.target.resume();
  }

  /** A blocking target drained (or went away): read from its WebSocket again unless another one still blocks. */
  private unblock(session: Session): void {
    if (!session.blocking) return;
    session.blocking = false;
    const others = [...this.sessions.values()].some((s) => s !== session && s.ws === session.ws && s.blocking);
    if (!others && session.ws.readyState === WebSocket.OPEN) session.ws.resume();
  }

  private forget(session: Session): void {
    if (this.sessions.get(session.id) === session) this.sessions.delete(session.id);
    this.unblock(session);
    session.paused = false;
  }
}
