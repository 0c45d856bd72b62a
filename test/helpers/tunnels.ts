// Tunnel tests' parts: TCP targets started by the test, the tunnel REST calls, and a client exchange
// that sends bytes and reads as many back over any Duplex (a TCP socket, the proxy WebSocket as a
// stream, the CLI's local port).
import { createHash } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { expect } from 'vitest';
import type { TestApp } from './app.js';

export const MiB = 1024 * 1024;

export const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** TCP servers on 127.0.0.1 for the tunnels to reach; close() stops them all. */
export class TunnelTargets {
  readonly #servers: net.Server[] = [];

  /** Runs `onSocket` for every connection; returns the port. */
  async listen(onSocket: (socket: net.Socket) => void): Promise<number> {
    const server = net.createServer(onSocket);
    this.#servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  /** Sends back every byte it receives. */
  echo(): Promise<number> {
    return this.listen((socket) => socket.on('error', () => undefined).pipe(socket));
  }

  async close(): Promise<void> {
    await Promise.all(this.#servers.map((s) => new Promise((resolve) => s.close(resolve))));
  }
}

export function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * Sends `data` and reads until as many bytes came back, then destroys the stream. (The tunnel protocol
 * has no half-close: a client's end closes its session, as it does for the ssh and RDP clients tunnels
 * serve.)
 */
export async function exchange(stream: Duplex, data: Buffer): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let received = 0;
  const done = new Promise<Buffer>((resolve, reject) => {
    stream.on('data', (c: Buffer) => {
      chunks.push(c);
      received += c.length;
      if (received >= data.length) resolve(Buffer.concat(chunks));
    });
    stream.on('error', reject);
    stream.on('close', () => reject(new Error(`closed after ${received} of ${data.length} bytes`)));
  });
  // In socket-sized pieces: over the proxy WebSocket each write is one message (at most 4 MiB).
  for (let offset = 0; offset < data.length; offset += 64 * 1024) stream.write(data.subarray(offset, offset + 64 * 1024));
  const back = await done;
  stream.destroy();
  return back;
}

export interface TunnelDto {
  tunnel_id: string;
  agent_id: string;
  proxy_port: number;
  bind_address: string;
  proxy_path: string;
  allow_from: string[];
  opened_by: { type: 'user' | 'api_key'; name: string; key_hint: string | null };
  refused_connections: number;
  sessions?: number;
  paused_sessions?: number;
  bytes_in?: number;
  bytes_out?: number;
  buffered_bytes?: number;
}

/** POST /agents/{id}/tunnel to 127.0.0.1:`port`; fails the test unless 201. */
export async function openTunnel(t: TestApp, headers: Record<string, string>, agentId: string, port: number): Promise<TunnelDto> {
  const res = await t.app.inject({ method: 'POST', url: `/api/v1/agents/${agentId}/tunnel`, headers, payload: { target_host: '127.0.0.1', target_port: port } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as TunnelDto;
}

export async function tunnelsOf(t: TestApp, headers: Record<string, string>, agentId: string): Promise<TunnelDto[]> {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/agents/${agentId}/tunnels`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as TunnelDto[];
}

/**
 * A client that reads nothing until `resume()`, then counts what it gets and how its connection ended.
 * It reads one byte at a time on purpose: Node 20's libuv (1.46) reports a reset that arrives while
 * unread bytes are queued as a clean EOF whenever its last read comes up short (libuv/libuv#4997 fixed
 * it upstream); with one-byte reads no read comes up short, so the client sees the reset as ECONNRESET,
 * like ssh, curl or a browser would. Its kernel holds only its initial receive buffer (about 128 KiB),
 * as it never read before stalling.
 */
export function stalledClient(port: number, first: Buffer): { resume(): void; received(): number; ended: Promise<'EOF' | string> } {
  let received = 0;
  const socket = net.connect({ port, host: '127.0.0.1', onread: { buffer: Buffer.alloc(1), callback: (n) => ((received += n), true) } });
  socket.pause();
  socket.write(first);
  const ended = new Promise<'EOF' | string>((resolve) => {
    socket.on('end', () => resolve('EOF'));
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
  return { resume: () => socket.resume(), received: () => received, ended };
}
