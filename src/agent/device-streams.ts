// The agent side of device sessions' streams (issue 59: a shell, a file read or written): one entry per
// session id on the current WebSocket. Binary frames of a known session go to its sink; tunnel_pause /
// tunnel_resume hold and release its source (the shell's output, the file being read); what the device
// produces goes out in the session's frames, and the source is paused while the WebSocket's send queue
// is above the high-water mark. Sessions die with the WebSocket they were opened on. Tunnels keep their
// own table (tunnel-sessions.ts); a frame whose id is not here goes to them.
import WebSocket from 'ws';
import { decodeTunnelFrame, tunnelFrameHeader } from '../modules/agent-hub/agent-protocol.js';
import type { SessionClosedFrame } from '../modules/agent-hub/device-protocol.js';
import { DrainWatch } from '../modules/agent-hub/drain-watch.js';
import { CommandError } from './commands/command-error.js';

/** What a session's kind does with the stream. */
export interface StreamHandler {
  /** Bytes from the server (keystrokes, a file's bytes). */
  data(payload: Buffer): void;
  /** Stop reading the source (the server's client is slow, or the WebSocket is full). */
  pause(): void;
  /** Read the source again. */
  resume(): void;
  /** The WebSocket closed or the server ended the session: stop and clean up, sending nothing. */
  destroy(): void;
}

/** What a session's kind gets to talk to the server. */
export interface StreamPort {
  readonly id: string;
  /** Sends bytes in this session's frames; false once the WebSocket or the session is gone. */
  send(payload: Buffer): boolean;
  /** Ends the session from the device's side with a session_closed frame (after the bytes sent before). */
  close(end: Omit<SessionClosedFrame, 'type' | 'session_id'>): void;
  /**
   * Stops (true) or restarts (false) reading the WebSocket while this session's sink (a file being
   * written to a slow disk) cannot keep up; reading restarts once no session holds it. Ended sessions
   * let go by themselves.
   */
  holdInbound(hold: boolean): void;
}

interface Entry {
  id: string;
  ws: WebSocket;
  drain: DrainWatch;
  header: Buffer;
  handler: StreamHandler | null;
  /** The server asked to hold the source (tunnel_pause). */
  held: boolean;
  /** The WebSocket's queue is full; the source waits for it to drain. */
  full: boolean;
}

const HIGH_WATER = 1024 * 1024;
const LOW_WATER = 256 * 1024;

export class AgentStreams {
  readonly #entries = new Map<string, Entry>();
  /** Sessions that stopped reading the WebSocket (their sink is slow). */
  readonly #inboundHolders = new Set<Entry>();
  #ws: WebSocket | null = null;
  #drain: DrainWatch | null = null;

  constructor(private readonly log: (line: string) => void = () => undefined) {}

  get size(): number {
    return this.#entries.size;
  }

  /** Uses `ws` from now on; when it closes, every session opened on it is destroyed. */
  attach(ws: WebSocket): void {
    const drain = new DrainWatch(ws, LOW_WATER);
    this.#ws = ws;
    this.#drain = drain;
    ws.once('close', () => {
      if (this.#ws === ws) {
        this.#ws = null;
        this.#drain = null;
      }
      for (const entry of [...this.#entries.values()]) if (entry.ws === ws) this.#destroy(entry);
      drain.release();
    });
  }

  /**
   * Opens a session on the current WebSocket; `start` gets its port and returns its handler (it may
   * throw a CommandError, and then nothing is left). The caller answers the command; the handler's
   * source should be read only after that (resume on setImmediate), so no frame precedes the answer.
   */
  async open(id: string, start: (port: StreamPort) => Promise<StreamHandler>): Promise<void> {
    const ws = this.#ws;
    const drain = this.#drain;
    if (!ws || !drain || ws.readyState !== WebSocket.OPEN) throw new CommandError('not connected to the server');
    if (this.#entries.has(id)) throw new CommandError(`session ${id} already exists`);
    const entry: Entry = { id, ws, drain, header: tunnelFrameHeader(id), handler: null, held: false, full: false };
    this.#entries.set(id, entry);
    try {
      entry.handler = await start(this.#port(entry));
    } catch (err) {
      this.#entries.delete(id);
      throw err;
    }
    if (this.#entries.get(id) !== entry) entry.handler.destroy(); // the socket closed meanwhile
  }

  /** The handler of a session (pty_resize finds its shell this way). */
  handler<T extends StreamHandler>(id: string): T | undefined {
    return (this.#entries.get(id)?.handler ?? undefined) as T | undefined;
  }

  /** The server ended the session (pty_close, fs_cancel): destroyed, no session_closed sent. */
  end(id: string): boolean {
    const entry = this.#entries.get(id);
    if (!entry) return false;
    this.#destroy(entry);
    return true;
  }

  /** A binary frame: true when it belonged to a session here. */
  handleBinary(frame: Buffer): boolean {
    const decoded = decodeTunnelFrame(frame);
    const entry = decoded ? this.#entries.get(decoded.sessionId) : undefined;
    if (!decoded || !entry) return false;
    if (decoded.payload.length > 0) entry.handler?.data(decoded.payload);
    return true;
  }

  /** tunnel_pause for a session here: true when it was one. */
  hold(id: string): boolean {
    const entry = this.#entries.get(id);
    if (!entry) return false;
    entry.held = true;
    entry.handler?.pause();
    return true;
  }

  /** tunnel_resume for a session here: true when it was one. */
  release(id: string): boolean {
    const entry = this.#entries.get(id);
    if (!entry) return false;
    entry.held = false;
    if (!entry.full) entry.handler?.resume();
    return true;
  }

  #port(entry: Entry): StreamPort {
    return {
      id: entry.id,
      send: (payload) => {
        const { ws, drain } = entry;
        if (this.#entries.get(entry.id) !== entry || ws.readyState !== WebSocket.OPEN) return false;
        ws.send(Buffer.concat([entry.header, payload]), drain.sent);
        if (ws.bufferedAmount > HIGH_WATER && !entry.full) {
          entry.full = true;
          entry.handler?.pause();
          drain.whenDrained(() => {
            entry.full = false;
            if (!entry.held && this.#entries.get(entry.id) === entry) entry.handler?.resume();
          });
        }
        return true;
      },
      close: (end) => {
        if (this.#entries.get(entry.id) !== entry) return;
        this.#entries.delete(entry.id);
        this.#letInbound(entry);
        if (entry.ws.readyState === WebSocket.OPEN) entry.ws.send(JSON.stringify({ type: 'session_closed', session_id: entry.id, ...end }));
      },
      holdInbound: (hold) => {
        if (!hold) return this.#letInbound(entry);
        if (this.#entries.get(entry.id) !== entry || this.#inboundHolders.has(entry)) return;
        this.#inboundHolders.add(entry);
        entry.ws.pause();
      },
    };
  }

  #letInbound(entry: Entry): void {
    if (!this.#inboundHolders.delete(entry)) return;
    const others = [...this.#inboundHolders].some((e) => e.ws === entry.ws);
    if (!others && entry.ws.readyState === WebSocket.OPEN) entry.ws.resume();
  }

  #destroy(entry: Entry): void {
    if (this.#entries.get(entry.id) === entry) this.#entries.delete(entry.id);
    this.#letInbound(entry);
    try {
      entry.handler?.destroy();
    } catch (err) {
      this.log(`session ${entry.id}: ${(err as Error).message}`);
    }
  }
}
