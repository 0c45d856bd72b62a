// One client connection through a tunnel: its bytes go to the agent as binary frames and the agent's
// bytes come back, with backpressure both ways and nothing buffered without bound.
//
// Toward the agent, the client is not read while the agent's WebSocket has more than HIGH_WATER bytes
// queued. Toward the client, the agent's socket is never paused: it carries every session of the agent
// and its commands, and one slow client must hold up none of them. Instead, once more than PAUSE_AT
// bytes wait for this client, the agent is asked to stop reading this session's target (tunnel_pause)
// until the client has caught up (tunnel_resume), and the client gets every byte however long it
// stalls. An agent that cannot pause sessions keeps sending, so there the backlog is bounded at CUT_AT
// and the client is then cut with an error (a TCP RST, a WebSocket error code), never an orderly end it
// could take for the end of the stream. HARD_CAP bounds the rest (bytes in flight when the pause went
// out, an agent that says it paused and does not).
import { tunnelFrameHeader } from '../agent-hub/agent-protocol.js';
import type { ClientEnd } from './client-end.js';

const MiB = 1024 * 1024;
/** Above this many queued bytes on the agent's socket, clients stop being read. */
export const HIGH_WATER = MiB;
/** Above this many bytes waiting for the client, the agent is asked to pause the session … */
export const PAUSE_AT = MiB;
/** … and once the client is down to this, to resume it. */
export const RESUME_AT = 256 * 1024;
/** The most that may wait for a client whose agent cannot pause sessions; then the client is cut. */
export const CUT_AT = 8 * MiB;
/** The most that may wait for any client (while the agent's ability is unknown, and after a pause). */
export const HARD_CAP = 32 * MiB;
/** Largest payload per frame; socket chunks are normally 64 KiB. */
const MAX_PAYLOAD = 256 * 1024;

/** Sees a session's bytes both ways and may drop some of the client's (issue 60's view-only desktops). */
export interface SessionWatch {
  /** The client's bytes; returns what to pass on. Throws to end the session (a stream it cannot follow). */
  fromClient(chunk: Buffer): Buffer;
  /** The target's bytes, only observed. */
  fromTarget(chunk: Buffer): void;
}

export interface SessionLink {
  /** Sends one tunnel frame to the agent, `header` then `payload`; false when the agent is gone. */
  send(header: Buffer, payload: Buffer): boolean;
  /** Bytes queued on the agent's socket. */
  queued(): number;
  /** Calls back once the agent's queue is short again (or the agent is gone). */
  whenDrained(resume: () => void): void;
  /** Asks the agent to stop reading this session's target; resolves false when it cannot. */
  pause(sessionId: string): Promise<boolean>;
  resume(sessionId: string): void;
  /** Whether the agent can pause sessions: true, false, or null while not known yet. */
  canPause(): boolean | null;
}

/** A tunnel's byte counts, shared by its sessions (bytes may still be taken after a session closed). */
export interface Traffic {
  bytesIn: number;
  bytesOut: number;
}

/**
 * Who ended a session: its client, the target (through the agent), the tunnel, the agent's socket, or the
 * server because its client took too little (`overflow`).
 */
export type CloseReason = 'client' | 'target' | 'tunnel' | 'agent' | 'overflow';

export interface Overflow {
  backlog: number;
  limit: number;
  /** Whether the agent can pause sessions (false: the lower limit applied). */
  agentCanPause: boolean | null;
}

export class TunnelSession {
  #closed = false;
  /** What goes in front of every chunk toward the agent (the session id), built once. */
  readonly #header: Buffer;
  /** A tunnel_pause went out (or is being asked) and no tunnel_resume yet. */
  #agentHeld = false;

  constructor(
    readonly id: string,
    private readonly client: ClientEnd,
    private readonly link: SessionLink,
    private readonly traffic: Traffic,
    private readonly onClose: (session: TunnelSession, by: CloseReason, overflow?: Overflow) => void,
    private readonly watch?: SessionWatch,
  ) {
    this.#header = tunnelFrameHeader(id);
    // Reading starts paused: nothing goes to the agent until it has connected to the target.
    client.bind({ data: (chunk) => this.#fromClient(chunk), gone: () => this.close('client'), taken: (bytes) => this.#taken(bytes) });
  }

  /** The agent reached the target: start relaying the client's bytes. */
  start(): void {
    if (!this.#closed) this.client.resumeReading();
  }

  /** Bytes from the agent for this session. */
  fromAgent(payload: Buffer): void {
    if (this.#closed) return;
    this.watch?.fromTarget(payload);
    this.client.write(payload);
    this.#checkBacklog();
  }

  /**
   * Ends the session. The target closing gives the client an orderly end after the bytes already
   * written; anything else ends the client's connection at once.
   */
  close(by: Exclude<CloseReason, 'overflow'>): void {
    if (this.#closed) return;
    this.#closed = true;
    if (by === 'target') this.client.end();
    else this.client.destroy();
    this.onClose(this, by);
  }

  /** Bytes written toward the client that it has not taken yet (held by the server). */
  get buffered(): number {
    return this.#closed ? 0 : this.client.backlog;
  }

  /** Whether the agent was asked to hold this session's target for a slow client. */
  get held(): boolean {
    return this.#agentHeld && !this.#closed;
  }

  #checkBacklog(): void {
    const backlog = this.client.backlog;
    const canPause = this.link.canPause();
    if (backlog > PAUSE_AT && !this.#agentHeld && canPause !== false) this.#holdAgent();
    const limit = canPause === false ? CUT_AT : HARD_CAP;
    if (backlog > limit) this.#cut({ backlog, limit, agentCanPause: canPause });
  }

  #holdAgent(): void {
    this.#agentHeld = true;
    void this.link.pause(this.id).then((paused) => {
      if (paused || this.#closed) return;
      this.#agentHeld = false;
      this.#checkBacklog(); // the agent cannot pause: the lower limit applies from now on
    });
  }

  #taken(bytes: number): void {
    this.traffic.bytesOut += bytes;
    if (this.#agentHeld && !this.#closed && this.client.backlog <= RESUME_AT) {
      this.#agentHeld = false;
      this.link.resume(this.id);
    }
  }

  #cut(overflow: Overflow): void {
    if (this.#closed) return;
    this.#closed = true;
    // Closed (and the agent told) once the client is cut: until then its count of taken bytes may still
    // settle, and nobody should learn that the session is over before the client could.
    void this.client
      .reset(`the client did not take the target's bytes: more than ${overflow.limit / MiB} MiB waited`)
      .catch(() => undefined)
      .then(() => this.onClose(this, 'overflow', overflow));
  }

  #fromClient(received: Buffer): void {
    this.traffic.bytesIn += received.length;
    let chunk = received;
    if (this.watch) {
      try {
        chunk = this.watch.fromClient(received);
      } catch {
        this.close('tunnel');
        return;
      }
      if (chunk.length === 0) return;
    }
    for (let offset = 0; offset < chunk.length; offset += MAX_PAYLOAD) {
      const payload = chunk.length <= MAX_PAYLOAD ? chunk : chunk.subarray(offset, offset + MAX_PAYLOAD);
      if (!this.link.send(this.#header, payload)) {
        this.close('tunnel');
        return;
      }
    }
    if (this.link.queued() > HIGH_WATER) {
      this.client.pauseReading();
      this.link.whenDrained(() => {
        if (!this.#closed) this.client.resumeReading();
      });
    }
  }
}
