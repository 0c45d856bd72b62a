// A proxy WebSocket that reached an instance without the tunnel (cluster mode, issue 32) is forwarded to
// the instance that has it, over plain HTTP between instances: tunnel bytes never cross the bus, which
// has no flow control. A redirect would not do: browsers and most WebSocket clients do not follow one
// on a handshake. The original credentials (Authorization, X-API-Key, or the query's token/api_key)
// go along unchanged, so the holder authenticates the caller and checks that it opened the tunnel
// exactly as for a direct request; nothing this instance concluded about the caller is trusted there.
// The holder's handshake is made before this instance answers the client's, so a refusal there (401,
// 403, 404) reaches the client as a plain HTTP answer, as it would directly.
import type { FastifyRequest } from 'fastify';
import WebSocket from 'ws';
import { AppError, ERROR_STATUS, type ErrorCode } from '../../platform/errors.js';
import { MAX_MESSAGE_BYTES } from '../agent-hub/agent-protocol.js';
import { FORWARDED_BY_HEADER, type TunnelHolder } from './remote-tunnels.js';

/** Above this many bytes queued toward one side, the other side is no longer read … */
const HIGH_WATER = 1024 * 1024;
/** … until that side has taken all but this much. */
const LOW_WATER = 256 * 1024;
/** A holder's socket the client's upgrade never claimed (the client left mid-handshake) is closed. */
const CLAIM_MS = 30_000;

interface Upstream {
  socket: WebSocket;
  /** What the holder sent before the client's socket was there (a server's banner, a device shell's session message). */
  early: Array<{ data: Buffer; isBinary: boolean }>;
  claimTimer: NodeJS.Timeout;
}

const upstreams = new WeakMap<FastifyRequest, Upstream>();

function forwardedHeaders(request: FastifyRequest, instanceId: string): Record<string, string> {
  const headers: Record<string, string> = { [FORWARDED_BY_HEADER]: instanceId };
  for (const name of ['authorization', 'x-api-key', 'user-agent']) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

/**
 * Runs in the proxy route's preHandler: for an upgrade, opens the WebSocket to the holder (claimed by
 * `pipeToHolder` once the client's upgrade completes); for a plain request, asks the holder and throws
 * its answer. A refusal by the holder is thrown as the same error.
 */
export async function connectToHolder(request: FastifyRequest, holder: TunnelHolder, instanceId: string): Promise<void> {
  // request.url is the path with its query: the holder serves the same route, credentials included.
  const url = `${holder.url}${request.url}`;
  if (!request.ws) {
    const res = await fetch(url, { headers: forwardedHeaders(request, instanceId) }).catch(() => undefined);
    if (!res) throw unreachable();
    throw refusal(res.status, await res.text());
  }
  const socket = new WebSocket(url.replace(/^http/, 'ws'), { headers: forwardedHeaders(request, instanceId), maxPayload: MAX_MESSAGE_BYTES });
  const early: Upstream['early'] = [];
  const outcome = await new Promise<{ open: true } | { open: false; status: number; body: string }>((resolve) => {
    socket.once('open', () => {
      socket.on('message', (data, isBinary) => early.push({ data: toBuffer(data), isBinary }));
      resolve({ open: true });
    });
    socket.once('unexpected-response', (req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ open: false, status: res.statusCode ?? 502, body: Buffer.concat(chunks).toString() }));
      res.on('error', () => resolve({ open: false, status: 502, body: '' }));
    });
    socket.on('error', () => resolve({ open: false, status: 0, body: '' }));
  });
  if (!outcome.open) {
    socket.terminate();
    throw outcome.status === 0 ? unreachable() : refusal(outcome.status, outcome.body);
  }
  socket.pause();
  const claimTimer = setTimeout(() => socket.terminate(), CLAIM_MS);
  upstreams.set(request, { socket, early, claimTimer });
}

/** Runs in the proxy route's wsHandler: the client's socket and the holder's carry each other's bytes. */
export function pipeToHolder(client: WebSocket, request: FastifyRequest): boolean {
  const upstream = upstreams.get(request);
  if (!upstream) return false;
  upstreams.delete(request);
  clearTimeout(upstream.claimTimer);
  const { socket, early } = upstream;
  socket.removeAllListeners('message');
  for (const { data, isBinary } of early) client.send(data, { binary: isBinary });
  pipe(client, socket);
  pipe(socket, client);
  socket.resume();
  return true;
}

/**
 * Messages from `from` go to `to`, text as text and binary as binary (a device shell's control frames
 * are text); `from` is not read while too much waits for `to`. Closes travel too.
 */
function pipe(from: WebSocket, to: WebSocket): void {
  let queued = 0;
  from.on('message', (data, isBinary) => {
    if (to.readyState !== WebSocket.OPEN) return;
    const chunk = toBuffer(data);
    queued += chunk.length;
    to.send(chunk, { binary: isBinary }, () => {
      queued -= chunk.length;
      if (queued <= LOW_WATER && from.isPaused && from.readyState === WebSocket.OPEN) from.resume();
    });
    if (queued > HIGH_WATER) from.pause();
  });
  from.on('close', (code, reason) => passClose(to, code, reason.toString()));
  from.on('error', () => to.terminate());
}

/** Gives the other side the same close: a normal end stays normal, an error close stays an error. */
function passClose(to: WebSocket, code: number, reason: string): void {
  if (to.readyState === WebSocket.CLOSED || to.readyState === WebSocket.CLOSING) return;
  // 1005 (no code) and 1006 (dropped) are never sent on the wire: the first closes plainly, the second drops.
  if (code === 1006) to.terminate();
  else if (code === 1005) to.close();
  else to.close(code, reason);
}

function toBuffer(data: WebSocket.RawData): Buffer {
  return Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

/** The holder's refusal, as the same error (its body is the contract's error body). */
function refusal(status: number, body: string): AppError {
  let parsed: { code?: unknown; message?: unknown } = {};
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    // Not the contract's body: said below in general terms.
  }
  const code = typeof parsed.code === 'string' && parsed.code in ERROR_STATUS ? (parsed.code as ErrorCode) : undefined;
  if (code) return new AppError(code, typeof parsed.message === 'string' ? parsed.message : code, code === 'UPGRADE_REQUIRED' ? { headers: { upgrade: 'websocket' } } : {});
  return new AppError('SERVICE_UNAVAILABLE', `The server instance holding the tunnel answered ${status}`);
}

function unreachable(): AppError {
  return new AppError('SERVICE_UNAVAILABLE', 'The server instance holding the tunnel could not be reached', { headers: { 'retry-after': '5' } });
}
