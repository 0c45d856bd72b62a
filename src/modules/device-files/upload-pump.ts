// An HTTP request body sent to the device as an fs_write stream (issue 59): chunks go out in the
// session's frames; while more than 1 MiB waits on the agent's socket the request is paused, so a
// large upload never sits in the server's memory. Resolves with the agent's session_closed (the file
// is there, or why not); the client hanging up or the agent going away ends it with fs_cancel.
import type { Readable } from 'node:stream';
import type { AgentCommander } from '../agent-hub/agent-commander.js';
import type { DeviceStream, StreamSink } from '../agent-hub/device-streams.js';
import type { SessionClosedFrame } from '../agent-hub/device-protocol.js';

const HIGH_WATER = 1024 * 1024;

export type UploadEnd =
  | { kind: 'closed'; frame: SessionClosedFrame; sent: number }
  | { kind: 'agent-gone'; sent: number }
  | { kind: 'client-gone'; sent: number };

/** The sink of an upload's stream: its end arrives as a promise. */
export class UploadSink implements StreamSink {
  #settle: (end: UploadEnd) => void = () => undefined;
  /** Bytes sent to the agent so far. */
  sent = 0;
  readonly ended = new Promise<UploadEnd>((resolve) => {
    this.#settle = resolve;
  });

  data(): void {
    // The agent sends nothing on an upload's stream.
  }

  closed(frame: SessionClosedFrame): void {
    this.#settle({ kind: 'closed', frame, sent: this.sent });
  }

  gone(): void {
    this.#settle({ kind: 'agent-gone', sent: this.sent });
  }

  clientGone(): void {
    this.#settle({ kind: 'client-gone', sent: this.sent });
  }
}

/** Pumps `body` into `stream` until the body ends or the session does; returns how it ended. */
export async function pumpUpload(body: Readable, stream: DeviceStream, sink: UploadSink, commander: AgentCommander): Promise<UploadEnd> {
  let complete = false;
  const onData = (chunk: Buffer) => {
    sink.sent += chunk.length;
    if (!stream.send(chunk)) return;
    if (stream.queued() > HIGH_WATER && !body.isPaused()) {
      body.pause();
      stream.whenDrained(() => body.resume());
    }
  };
  const onEnd = () => {
    complete = true;
  };
  const onClose = () => {
    if (!complete) sink.clientGone();
  };
  body.on('data', onData);
  body.once('end', onEnd);
  body.once('close', onClose);
  body.once('error', onClose);
  const end = await sink.ended;
  body.off('data', onData);
  body.off('end', onEnd);
  body.off('close', onClose);
  body.off('error', onClose);
  stream.release();
  if (end.kind === 'client-gone') {
    // The device removes its temporary file; nothing of the upload is left.
    await commander.request(stream.agentId, 'fs_cancel', { session_id: stream.id }, 5000).catch(() => undefined);
  }
  return end;
}
