// One client connection through a tunnel: its bytes go to the agent as binary frames and the agent's
// bytes come back, with backpressure both ways. Toward the agent, the client's socket is paused while
// the agent's WebSocket has more than HIGH_WATER bytes queued; toward the client, the agent's socket
// is not read while more than CLIENT_HIGH_WATER bytes wait for the client. Nothing is buffered without
// bound.
//
// The tunnel protocol has no per-session flow control, so pausing the agent's socket pauses every
// session of that agent and its command channel too (keep-alive pongs and answers included). A client
// that takes nothing for STALL_LIMIT_MS is therefore cut off, so that one stuck client cannot make the
// agent's other sessions fail to connect (15 s), its commands time out, or cost it its connection (the
// hub drops a socket silent for 90 s).
import type { Duplex } from 'node:stream';
import type { Clock } from '../../platform/clock.js';
import { encodeTunnelFrame } from '../agent-hub/agent-protocol.js';

/** Above this many queued bytes on the agent's socket, clients stop being read. */
export const HIGH_WATER = 1024 * 1024;
/**
 * Above this many bytes waiting for a client, the agent's socket stops being read. Far above a
 * socket's own 16 KiB mark: pausing the agent stalls all its sessions, so it should be rare, and a
 * deeper buffer keeps the relay streaming instead of stopping and starting.
 */
export const CLIENT_HIGH_WATER = 1024 * 1024;
/** Largest payload per frame; socket chunks are normally 64 KiB. */
const MAX_PAYLOAD = 256 * 1024;
/** How long one client may hold the agent's socket paused before its session is closed. */
export const STALL_LIMIT_MS = 10_000;

export interface SessionLink {
  /** Sends a frame to the agent; false when the agent is gone. */
  send(frame: Buffer): boolean;
  /** Bytes queued on the agent's socket. */
  queued(): number;
  /** Calls back once the agent's queue is short again (or the agent is gone). */
  whenDrained(resume: () => void): void;
  /** One more (false) or one fewer (true) session that needs the agent's socket not read. */
  setAgentReading(reading: boolean): void;
}

/**
 * Who ended a session: its client, the target (through the agent), the tunnel, the agent's socket, or
 * the stall limit (a client that took nothing for STALL_LIMIT_MS while holding the agent paused).
 */
export type CloseReason = 'client' | 'target' | 'tunnel' | 'agent' | 'stalled';

export class TunnelSession {
  bytesIn = 0;
  bytesOut = 0;
  #closed = false;
  /** Whether this session holds the agent's socket paused (it waits for the client's drain). */
  #holdingAgent = false;
  /** Aborts the stall timer when the client drains in time. */
  #stallTimer: AbortController | undefined;

  constructor(
    readonly id: string,
    private readonly client: Duplex,
    private readonly link: SessionLink,
    private readonly clock: Clock,
    private readonly onClose: (session: TunnelSession, by: CloseReason) => void,
  ) {
    client.pause(); // until the agent has connected to the target
    client.on('data', (chunk: Buffer) => this.#fromClient(chunk));
    client.on('end', () => this.close('client'));
    client.on('close', () => this.close('client'));
    client.on('error', () => this.close('client'));
  }

  /** The agent reached the target: start relaying the client's bytes. */
  start(): void {
    if (!this.#closed) this.client.resume();
  }

  /** Bytes from the agent for this session. */
  fromAgent(payload: Buffer): void {
    if (this.#closed) return;
    this.bytesOut += payload.length;
    this.client.write(payload);
    // Past 16 KiB, write() returned false, so 'drain' will come once the client took everything.
    if (this.client.writableLength > CLIENT_HIGH_WATER && !this.#holdingAgent) {
      this.#holdingAgent = true;
      this.link.setAgentReading(false);
      this.client.once('drain', () => this.#releaseAgent());
      this.#startStallTimer();
    }
  }

  /**
   * Ends the session. The target closing gives the client an orderly EOF after the bytes already
   * written; the client leaving or the tunnel closing ends the client's socket outright.
   */
  close(by: CloseReason): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#releaseAgent(); // a paused agent socket must not outlive the client that paused it
    if (by === 'target') this.client.end();
    else this.client.destroy();
    this.onClose(this, by);
  }

  /** Bytes written toward the client that it has not taken yet (held by the server). */
  get buffered(): number {
    return this.client.writableLength;
  }

  get closed(): boolean {
    return this.#closed;
  }

  #releaseAgent(): void {
    if (!this.#holdingAgent) return;
    this.#holdingAgent = false;
    this.#stallTimer?.abort();
    this.#stallTimer = undefined;
    this.link.setAgentReading(true);
  }

  #startStallTimer(): void {
    const timer = new AbortController();
    this.#stallTimer = timer;
    this.clock.sleep(STALL_LIMIT_MS, timer.signal).then(
      () => this.close('stalled'),
      () => undefined, // drained in time
    );
  }

  #fromClient(chunk: Buffer): void {
    this.bytesIn += chunk.length;
    for (let offset = 0; offset < chunk.length; offset += MAX_PAYLOAD) {
      if (!this.link.send(encodeTunnelFrame(this.id, chunk.subarray(offset, offset + MAX_PAYLOAD)))) {
        this.close('tunnel');
        return;
      }
    }
    if (this.link.queued() > HIGH_WATER) {
      this.client.pause();
      this.link.whenDrained(() => {
        if (!this.#closed) this.client.resume();
      });
    }
  }
}

