// A tunnel frame is a session-id header followed by a socket chunk (contract §5). Building it as one
// buffer costs an allocation and a copy of every relayed byte (Buffer.concat was 7 % of the server's CPU
// per relayed GiB), and `ws` has no way to send one message from two buffers. So the frame goes out the
// way `ws` itself sends any frame (a cork, the frame header, the data, an uncork: one writev), with the
// WebSocket frame header and the session header in one small buffer and the chunk untouched behind it.
//
// This writes to the `ws` socket past its sender, which is safe only while the sender would write
// straight through itself: a server socket (no masking), nothing queued (no compression or Blob send
// in progress, which would reorder), no fragmented message half sent. The fields are `ws` 8 internals,
// checked on every send; if any is missing or says otherwise, the frame is concatenated and sent
// through `ws` as before. `ws` counts the socket's queue in bufferedAmount either way.
import type { HubSocket } from './hub-socket.js';

/** FIN + opcode 2 (binary), RFC 6455 §5.2. */
const FIN_BINARY = 0x82;

interface WsInternals {
  _isServer?: unknown;
  _socket?: {
    cork(): void;
    uncork(): void;
    write(chunk: Buffer, cb?: (err?: Error | null) => void): boolean;
  } | null;
  _sender?: { _state?: unknown; _queue?: unknown; _firstFragment?: unknown } | null;
}

/** Whether a frame written to the raw socket now lands where `ws` would have put it. */
function writesStraightThrough(ws: WsInternals): boolean {
  const sender = ws._sender;
  return (
    ws._isServer === true &&
    typeof ws._socket?.cork === 'function' &&
    sender != null &&
    sender._state === 0 &&
    Array.isArray(sender._queue) &&
    sender._queue.length === 0 &&
    sender._firstFragment === true
  );
}

/** The WebSocket frame header for an unmasked binary message of `length` bytes, with `prefix` behind it. */
function frameHead(length: number, prefix: Buffer): Buffer {
  const size = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const head = Buffer.allocUnsafe(size + prefix.length);
  head[0] = FIN_BINARY;
  if (size === 2) {
    head[1] = length;
  } else if (size === 4) {
    head[1] = 126;
    head.writeUInt16BE(length, 2);
  } else {
    head[1] = 127;
    head.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    head.writeUInt32BE(length >>> 0, 6);
  }
  prefix.copy(head, size);
  return head;
}

/**
 * Sends `prefix` and `payload` as one binary message on an open socket, without joining them. `sent`
 * is called once the message reached the kernel (or failed), as `ws` calls a send callback.
 */
export function sendTwoParts(socket: HubSocket, prefix: Buffer, payload: Buffer, sent: (err?: Error | null) => void): void {
  const ws = socket as unknown as WsInternals;
  if (!writesStraightThrough(ws)) {
    socket.send(Buffer.concat([prefix, payload]), sent);
    return;
  }
  const raw = ws._socket!;
  raw.cork();
  raw.write(frameHead(prefix.length + payload.length, prefix));
  raw.write(payload, sent);
  raw.uncork();
}
