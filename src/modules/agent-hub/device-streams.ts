// The streams of device sessions (issue 59: a device shell, a file read or written) on an agent's socket:
// each has a session id the hub makes, its bytes travel in the tunnels' binary framing, and the agent
// ends it with a session_closed frame. The hub hands every binary frame and session_closed of a known
// stream to its sink, and tells every sink of an agent when that agent's socket is gone. Tunnels keep
// their own table (tunnel-manager.ts); frames of ids not here go to them.
import { randomBytes } from 'node:crypto';
import { decodeTunnelFrame, tunnelFrameHeader } from './agent-protocol.js';
import type { SessionClosedFrame } from './device-protocol.js';

export interface StreamSink {
  /** The payload of one binary frame of this session, from the agent. */
  data(payload: Buffer): void;
  /** The agent ended the stream (session_closed). The stream is already forgotten. */
  closed(frame: SessionClosedFrame): void;
  /** The agent's socket is gone (closed, replaced, agent deleted, server stopping). Already forgotten. */
  gone(): void;
}

/** What a device session holds of its stream: its id and the way to the agent. */
export interface DeviceStream {
  readonly id: string;
  readonly agentId: string;
  /** Sends bytes toward the agent in this session's frames; false when the agent's socket is gone. */
  send(payload: Buffer): boolean;
  /** Bytes waiting on the agent's socket (all sessions and commands together). */
  queued(): number;
  /** Calls back once the agent's send queue is short again, or the agent is gone. */
  whenDrained(resume: () => void): void;
  /** Forgets the stream here (the caller tells the agent, by the command that ends its kind). */
  release(): void;
}

/** What the streams need of the hub's sockets. */
export interface StreamTransport {
  sendBinary(agentId: string, header: Buffer, payload: Buffer): boolean;
  bufferedAmount(agentId: string): number;
  whenDrained(agentId: string, resume: () => void): void;
}

/** Largest payload per frame toward the agent. */
const MAX_PAYLOAD = 256 * 1024;

interface Entry {
  agentId: string;
  sink: StreamSink;
}

export class DeviceStreams {
  readonly #streams = new Map<string, Entry>();

  constructor(private readonly transport: StreamTransport) {}

  get size(): number {
    return this.#streams.size;
  }

  /** A new stream on `agentId`'s socket; `kind` prefixes its id (it shows in the agent's logs). */
  open(agentId: string, kind: string, sink: StreamSink): DeviceStream {
    const id = `${kind}-${randomBytes(12).toString('hex')}`;
    const header = tunnelFrameHeader(id);
    this.#streams.set(id, { agentId, sink });
    const { transport } = this;
    return {
      id,
      agentId,
      send(payload) {
        if (payload.length <= MAX_PAYLOAD) return transport.sendBinary(agentId, header, payload);
        for (let offset = 0; offset < payload.length; offset += MAX_PAYLOAD) {
          if (!transport.sendBinary(agentId, header, payload.subarray(offset, offset + MAX_PAYLOAD))) return false;
        }
        return true;
      },
      queued: () => transport.bufferedAmount(agentId),
      whenDrained: (resume) => transport.whenDrained(agentId, resume),
      release: () => {
        if (this.#streams.get(id)?.sink === sink) this.#streams.delete(id);
      },
    };
  }

  /** A binary frame from `agentId`: true when it belonged to one of its streams (handled). */
  binary(agentId: string, frame: Buffer): boolean {
    const decoded = decodeTunnelFrame(frame);
    const entry = decoded ? this.#streams.get(decoded.sessionId) : undefined;
    // Another agent naming this id is not its owner: the frame is not ours (and is dropped by tunnels).
    if (!decoded || !entry || entry.agentId !== agentId) return false;
    entry.sink.data(decoded.payload);
    return true;
  }

  /** The agent's session_closed; false when no stream of that agent has the id. */
  closed(agentId: string, frame: SessionClosedFrame): boolean {
    const entry = this.#streams.get(frame.session_id);
    if (!entry || entry.agentId !== agentId) return false;
    this.#streams.delete(frame.session_id);
    entry.sink.closed(frame);
    return true;
  }

  /** The agent's socket is gone: every stream of it ends. */
  agentGone(agentId: string): void {
    for (const [id, entry] of [...this.#streams]) {
      if (entry.agentId !== agentId) continue;
      this.#streams.delete(id);
      entry.sink.gone();
    }
  }

  /** The server stops: every stream ends. */
  stopAll(): void {
    for (const [id, entry] of [...this.#streams]) {
      this.#streams.delete(id);
      entry.sink.gone();
    }
  }
}
