// The client side of `/api/v1/proxy/{tunnel_id}`: a local TCP port whose every connection becomes one
// WebSocket to the server, and so one session through the tunnel. For technicians who reach the RMM
// server over HTTPS but not its proxy ports (which bind 127.0.0.1 by default, and let in only the
// addresses of the tunnel's allow_from): it needs no open port, only the credentials that opened the tunnel.
import net, { type AddressInfo } from 'node:net';
import WebSocket, { createWebSocketStream } from 'ws';
import { apiSocketUrl } from '../../agent/server-api.js';
import { LocalPeers } from './local-peer.js';

export interface TunnelClientOptions {
  serverUrl: string;
  tunnelId: string;
  /** Where the local port listens; port 0 picks a free one. */
  listen: { host: string; port: number };
  credentials: { apiKey: string } | { token: string };
  /** One line per connection event (opened, refused, closed). */
  report?: (line: string) => void;
}

export interface TunnelClient {
  /** The local address actually listened on. */
  readonly address: { host: string; port: number };
  close(): Promise<void>;
}

export async function exposeTunnel(options: TunnelClientOptions): Promise<TunnelClient> {
  const report = options.report ?? (() => undefined);
  const url = apiSocketUrl(options.serverUrl, `proxy/${encodeURIComponent(options.tunnelId)}`).toString();
  const headers = 'apiKey' in options.credentials ? { 'x-api-key': options.credentials.apiKey } : { authorization: `Bearer ${options.credentials.token}` };
  const open = new Set<net.Socket>();
  // The local port carries the opener's credentials: other accounts on a shared machine (a jump host)
  // must not ride on them. Only Linux tells who made a connection; elsewhere any local program may.
  const peers = new LocalPeers([], undefined, 'allow');

  const server = net.createServer((socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    socket.pause();
    socket.on('error', () => undefined);
    void peers.check(socket).then((verdict) => {
      if (socket.destroyed) return;
      if (verdict.allowed) return relay(socket, new WebSocket(url, { headers, perMessageDeflate: false }), report);
      report(`${socket.remoteAddress}:${socket.remotePort}: refused (uid ${verdict.uid ?? 'unknown'}): ${verdict.why}`);
      socket.resetAndDestroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.listen.port, options.listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  return {
    address: { host: address, port },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Relays one local connection over its WebSocket. A normal close (the target closed) ends the local
 * socket after its last bytes; any other close (the server cut a client that took too little, the
 * tunnel or the network went away) resets it, so the local program sees an error and never mistakes a
 * cut for the end of the stream. The local side closing closes the WebSocket (and so the session).
 */
function relay(socket: net.Socket, ws: WebSocket, report: (line: string) => void): void {
  const peer = `${socket.remoteAddress}:${socket.remotePort}`;
  let opened = false;
  let localGone = false;
  let closeCode = 0;
  socket.pause(); // nothing is read until the session exists
  socket.on('error', () => ws.terminate());
  socket.once('close', () => {
    localGone = true;
    if (ws.readyState === WebSocket.CONNECTING || ws.readyState === WebSocket.OPEN) ws.terminate();
  });
  ws.once('unexpected-response', (_request, response) => {
    let body = '';
    response.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    response.on('end', () => {
      report(`${peer}: refused by the server (${response.statusCode}): ${errorMessage(body)}`);
      socket.destroy();
    });
  });
  ws.on('error', (err) => {
    report(`${peer}: ${err.message}`);
    if (!opened) socket.destroy();
  });
  ws.once('open', () => {
    opened = true;
    report(`${peer}: session open`);
    const stream = createWebSocketStream(ws);
    stream.on('error', () => undefined); // the WebSocket's close says how the session ended
    socket.pipe(stream);
    stream.pipe(socket, { end: false });
    stream.once('end', () => {
      if (NORMAL_CLOSE.has(closeCode)) socket.end();
    });
    socket.resume();
  });
  ws.once('close', (code, reason) => {
    closeCode = code;
    if (!opened) return;
    if (localGone || NORMAL_CLOSE.has(code)) {
      report(`${peer}: session closed`);
      return;
    }
    const why = reason.length > 0 ? `: ${reason.toString()}` : '';
    report(`${peer}: session cut by the server (${code}${why}); resetting the local connection`);
    if (!socket.destroyed) socket.resetAndDestroy();
  });
}

/** 1000 (the target closed) and 1005 (closed without a code) end a session in order; any other code cuts it. */
const NORMAL_CLOSE = new Set([1000, 1005]);

/** `CODE: message` from the contract's error body, or the raw text. */
function errorMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; code?: unknown };
    if (typeof parsed.error === 'string') return `${String(parsed.code)}: ${parsed.error}`;
  } catch {
    // not JSON: show it as it is
  }
  return body.slice(0, 200);
}
