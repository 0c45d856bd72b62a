// How many of the bytes written to a TCP socket its peer has acknowledged, for the one moment it matters:
// the server is about to reset a client that stopped reading. Bytes the kernel took but the peer never
// acknowledged die with the reset (several MiB of send buffer on loopback), so "handed to the kernel"
// would overstate what the client got. Linux shows each socket's unacknowledged bytes (tx_queue) in
// /proc/net/tcp{,6}; Node keeps the count of bytes handed to the kernel in two internal fields. Elsewhere,
// or if either is missing, the answer is null and the caller keeps its own count of written bytes.
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { COLUMN, findTcpRow, procAddress } from './proc-net-tcp.js';

/**
 * How often the count is read, how long it must stay the same, and how many readings at most. The
 * peer acknowledges a small last segment only when its delayed-ACK timer fires (40 ms, up to 200 ms on
 * Linux), so two readings 20 ms apart could agree while bytes it had received were still
 * unacknowledged: the client then got up to one segment more than was counted (seen in CI: 15 KiB).
 * Unchanged for longer than that timer, the count is what the peer holds.
 */
const SETTLE_GAP_MS = 25;
const STABLE_FOR_MS = 250;
const SETTLE_READINGS = 120;

/** Node's own bookkeeping on a socket (not public API; checked at run time). */
interface SocketInternals {
  /** Bytes handed to libuv by all writes so far. */
  _bytesDispatched?: unknown;
  /** Bytes libuv still holds (not yet written to the kernel). */
  _handle?: { writeQueueSize?: unknown } | null;
}

/**
 * Bytes of `socket` its peer acknowledged, read until it has stayed the same for STABLE_FOR_MS, or null
 * when this platform cannot tell. One reading is not enough: a peer that stopped reading still takes
 * bytes for a while as its receive window grows, and segments on their way are received but not yet
 * acknowledged. Once the peer's buffer is full nothing moves, and then acknowledged is exactly what the
 * peer holds. Real
 * timers: this is about the kernel's pace, not the application's clock. Resolves early if the socket
 * is destroyed meanwhile.
 */
export async function bytesAcknowledged(socket: net.Socket): Promise<number | null> {
  if (process.platform !== 'linux') return null;
  let last = await readingOf(socket);
  let unchanged = 0;
  for (let i = 1; i < SETTLE_READINGS && last !== null && !socket.destroyed; i++) {
    await sleep(SETTLE_GAP_MS);
    const next = await readingOf(socket);
    unchanged = next === last ? unchanged + 1 : 0;
    if (unchanged * SETTLE_GAP_MS >= STABLE_FOR_MS) return next;
    last = next;
  }
  return last;
}

async function readingOf(socket: net.Socket): Promise<number | null> {
  const unacknowledged = await sendQueueOf(socket);
  const internals = socket as unknown as SocketInternals;
  const dispatched = internals._bytesDispatched;
  const inLibuv = internals._handle?.writeQueueSize;
  if (unacknowledged === null || typeof dispatched !== 'number' || typeof inLibuv !== 'number') return null;
  return Math.max(0, dispatched - inLibuv - unacknowledged);
}

/** The socket's tx_queue (written to the kernel, not yet acknowledged), from /proc/net/tcp or tcp6. */
export async function sendQueueOf(socket: net.Socket): Promise<number | null> {
  const { localAddress, localPort, remoteAddress, remotePort } = socket;
  if (!localAddress || !remoteAddress || localPort === undefined || remotePort === undefined) return null;
  let row: string[] | null;
  try {
    row = await findTcpRow(net.isIPv6(localAddress), procAddress(localAddress, localPort), procAddress(remoteAddress, remotePort));
  } catch {
    return null;
  }
  const tx = Number.parseInt(row?.[COLUMN.queues]?.split(':')[0] ?? '', 16);
  return Number.isNaN(tx) ? null : tx;
}
