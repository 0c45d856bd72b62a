// The client side of a tunnel session: a TCP connection on the proxy port, or one proxy WebSocket. A
// session writes the target's bytes here and learns what the client took, and it ends a client one of
// two ways: orderly after the last byte (the target closed), or cut so that the client sees an error and
// can never mistake the cut for the end of the stream (a TCP RST; a WebSocket error close code).
import type net from 'node:net';
import WebSocket from 'ws';
import { bytesAcknowledged } from './tcp-acked.js';

/** Close code of a proxy WebSocket the server cut because its client took too little (like HTTP 413). */
export const CLOSE_CLIENT_TOO_SLOW = 4413;

export interface ClientEvents {
  /** Bytes from the client. */
  data(chunk: Buffer): void;
  /** The client went away or failed. */
  gone(): void;
  /** The client's connection took `bytes` more of what was written (negative: a correction after a reset). */
  taken(bytes: number): void;
}

export interface ClientEnd {
  /** Starts delivering events; reading starts paused. */
  bind(events: ClientEvents): void;
  pauseReading(): void;
  resumeReading(): void;
  write(payload: Buffer): void;
  /** Bytes written and not yet taken by the client's connection. */
  readonly backlog: number;
  /** Ends after the bytes written so far: the target closed. */
  end(): void;
  /** Cuts the client so that it sees an error, never an orderly end of stream; resolves once it is cut. */
  reset(reason: string): Promise<void>;
  /** Ends at once (the client left, the tunnel or the agent went away). */
  destroy(): void;
}

/** A connection on the proxy port. "Taken" means written to the kernel, until a reset makes it exact. */
export class TcpClient implements ClientEnd {
  #events: ClientEvents | undefined;
  /** Bytes reported as taken so far. */
  #counted = 0;
  /** After a reset, write callbacks report nothing more: the count was settled from the kernel. */
  #settled = false;

  constructor(private readonly socket: net.Socket) {}

  bind(events: ClientEvents): void {
    this.#events = events;
    this.socket.pause();
    this.socket.on('data', (chunk: Buffer) => events.data(chunk));
    this.socket.on('end', () => events.gone());
    this.socket.on('close', () => events.gone());
    this.socket.on('error', () => events.gone());
  }

  pauseReading(): void {
    this.socket.pause();
  }

  resumeReading(): void {
    this.socket.resume();
  }

  write(payload: Buffer): void {
    this.socket.write(payload, (err) => {
      if (err || this.#settled) return;
      this.#counted += payload.length;
      this.#events?.taken(payload.length);
    });
  }

  get backlog(): number {
    return this.socket.writableLength;
  }

  end(): void {
    this.socket.end();
  }

  /**
   * An RST. Bytes the kernel took but the client never acknowledged die with it, so the count of taken
   * bytes is settled first from what the client's side acknowledged (Linux; elsewhere it stays "written
   * to the kernel", an overstatement of at most the socket's send buffer).
   */
  async reset(): Promise<void> {
    this.socket.pause();
    const acknowledged = await bytesAcknowledged(this.socket);
    if (this.socket.destroyed) return;
    this.#settled = true;
    if (acknowledged !== null) this.#events?.taken(acknowledged - this.#counted);
    this.socket.resetAndDestroy();
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** One proxy WebSocket. "Taken" means the frame's bytes reached the kernel of the server's socket. */
export class WebSocketClient implements ClientEnd {
  #backlog = 0;
  #events: ClientEvents | undefined;

  constructor(private readonly ws: WebSocket) {}

  bind(events: ClientEvents): void {
    this.#events = events;
    this.ws.pause();
    // Text messages carry bytes too: a client that sends text still means its bytes.
    this.ws.on('message', (data: WebSocket.RawData) => events.data(Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)));
    this.ws.on('close', () => events.gone());
    this.ws.on('error', () => events.gone());
  }

  pauseReading(): void {
    this.ws.pause();
  }

  resumeReading(): void {
    this.ws.resume();
  }

  write(payload: Buffer): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.#backlog += payload.length;
    this.ws.send(payload, { binary: true }, (err) => {
      this.#backlog -= payload.length;
      if (!err) this.#events?.taken(payload.length);
    });
  }

  get backlog(): number {
    return this.#backlog;
  }

  end(): void {
    this.ws.close(1000, 'the target closed the connection');
  }

  /**
   * An error close. Its frame queues behind the bytes already written, so a client that reads again soon
   * gets them and then the code; one that does not is dropped by `ws` after its close timeout (30 s),
   * which it sees as 1006. Neither is a normal close.
   */
  async reset(reason: string): Promise<void> {
    this.ws.close(CLOSE_CLIENT_TOO_SLOW, reason.slice(0, 120));
  }

  destroy(): void {
    this.ws.terminate();
  }
}
