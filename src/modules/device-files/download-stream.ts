// A file read from the device as a Readable the HTTP reply pipes (issue 59): the agent's frames are
// pushed as they come; when the reply's buffer is full (push() false: more than 1 MiB waits) the agent
// is asked to hold its reading (tunnel_pause) and to go on once the client read (tunnel_resume), so a
// 2 GiB file never sits in the server's memory. A range's end stops the read early (fs_cancel); the
// client hanging up cancels it too. The outcome (bytes sent, SHA-256, why it ended) goes to `ended`.
import { Readable } from 'node:stream';
import type { AgentCommander } from '../agent-hub/agent-commander.js';
import type { DeviceStream, StreamSink } from '../agent-hub/device-streams.js';
import type { SessionClosedFrame } from '../agent-hub/device-protocol.js';

const HIGH_WATER = 1024 * 1024;
const FLOW_TIMEOUT_MS = 5000;

export interface DownloadOutcome {
  reason: string;
  bytes: number;
  /** The agent's SHA-256 of what it sent, when that is all the client got. */
  sha256: string | null;
  ok: boolean;
}

export class DownloadStream extends Readable {
  /** Where the hub hands the agent's frames (Readable has its own `closed`, so not this object). */
  readonly sink: StreamSink = {
    data: (payload) => this.#data(payload),
    closed: (frame) => this.#closed(frame),
    gone: () => this.#gone(),
  };
  #stream: DeviceStream | null = null;
  #sent = 0;
  #agentPaused = false;
  #finished = false;

  constructor(
    private readonly commander: AgentCommander,
    private readonly agentId: string,
    /** Bytes the client gets (the range's length). */
    private readonly length: number,
    private readonly ended: (outcome: DownloadOutcome) => void,
  ) {
    super({ highWaterMark: HIGH_WATER });
  }

  /** The device stream whose frames come here (opened with this object as its sink). */
  attach(stream: DeviceStream): void {
    this.#stream = stream;
  }

  #data(payload: Buffer): void {
    if (this.#finished) return;
    const left = this.length - this.#sent;
    const chunk = payload.length > left ? payload.subarray(0, left) : payload;
    this.#sent += chunk.length;
    const room = this.push(chunk);
    if (this.#sent >= this.length) {
      // The range's end: the rest of the file is not wanted.
      this.#finish({ reason: 'completed', bytes: this.#sent, sha256: null, ok: true }, true);
      this.push(null);
      return;
    }
    if (!room && !this.#agentPaused) {
      this.#agentPaused = true;
      this.#flow('tunnel_pause');
    }
  }

  #closed(frame: SessionClosedFrame): void {
    if (this.#finished) return;
    if (frame.error || this.#sent < this.length) {
      this.#finish({ reason: `failed: ${frame.error ?? `the file ended after ${this.#sent} of ${this.length} bytes`}`, bytes: this.#sent, sha256: null, ok: false }, false);
      // The headers are out: ending the response early is how the client learns it is incomplete.
      this.destroy(new Error(frame.error ?? 'the file ended early'));
      return;
    }
    this.#finish({ reason: 'completed', bytes: this.#sent, sha256: frame.sha256 ?? null, ok: true }, false);
    this.push(null);
  }

  #gone(): void {
    if (this.#finished) return;
    this.#finish({ reason: 'agent-gone', bytes: this.#sent, sha256: null, ok: false }, false);
    this.destroy(new Error('the agent disconnected'));
  }

  override _read(): void {
    if (!this.#agentPaused || this.#finished) return;
    this.#agentPaused = false;
    this.#flow('tunnel_resume');
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    // The client hung up (or the reply failed) before the end: the agent stops reading.
    this.#finish({ reason: err ? `failed: ${err.message}` : 'client-gone', bytes: this.#sent, sha256: null, ok: false }, true);
    callback(err);
  }

  #finish(outcome: DownloadOutcome, cancel: boolean): void {
    if (this.#finished) return;
    this.#finished = true;
    const stream = this.#stream;
    stream?.release();
    if (cancel && stream) this.commander.request(this.agentId, 'fs_cancel', { session_id: stream.id }, FLOW_TIMEOUT_MS).catch(() => undefined);
    this.ended(outcome);
  }

  #flow(command: 'tunnel_pause' | 'tunnel_resume'): void {
    const id = this.#stream?.id;
    if (id) this.commander.request(this.agentId, command, { session_id: id }, FLOW_TIMEOUT_MS).catch(() => undefined);
  }
}
