// The client side of `/api/v1/proxy/{tunnel_id}`: a local TCP port whose every connection becomes one
// WebSocket to the server, and so one session through the tunnel. For technicians who reach the RMM
// server over HTTPS but not its proxy ports (which bind 127.0.0.1 by default).
import net, { type AddressInfo } from 'node:net';
import WebSocket, { createWebSocketStream } from 'ws';
import { apiSocketUrl } from '../../agent/server-api.js';

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

  const server = net.createServer((socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    relay(socket, new WebSocket(url, { headers, perMessageDeflate: false }), report);
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
 * Relays one local connection over its WebSocket. The target's EOF ends the local socket after its
 * last bytes; the local side closing closes the WebSocket (and so the session).
 */
function relay(socket: net.Socket, ws: WebSocket, report: (line: string) => void): void {
  const peer = `${socket.remoteAddress}:${socket.remotePort}`;
  socket.pause(); // nothing is read until the session exists
  socket.on('error', () => ws.terminate());
  socket.once('close', () => {
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
  ws.once('error', (err) => {
    report(`${peer}: ${err.message}`);
    socket.destroy();
  });
  ws.once('open', () => {
    report(`${peer}: session open`);
    const stream = createWebSocketStream(ws);
    stream.on('error', () => socket.destroy());
    socket.pipe(stream).pipe(socket);
    socket.resume();
  });
  ws.once('close', () => report(`${peer}: session closed`));
}

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
