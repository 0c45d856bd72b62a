// Graceful shutdown over real sockets: in-flight work finishes, new work is turned away, the database
// closes last, and a request that never ends cannot hold the process past the deadline.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { closeGracefully } from '../src/http/graceful-close.js';
import { buildTestApp } from './helpers/app.js';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A route that starts, reports it, and finishes only when released. */
function slowRoute(app: FastifyInstance, entered: () => void, release: Promise<void>) {
  app.get('/api/v1/probe/slow', { config: { access: 'public' } }, async () => {
    entered();
    await release;
    return { done: true };
  });
}

async function listen(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

/** Sends raw HTTP/1.1 on one socket and collects everything the server writes until it closes. */
function rawExchange(port: number, requests: string): { received: Promise<string>; socket: net.Socket } {
  const socket = net.connect(port, '127.0.0.1');
  socket.write(requests);
  let data = '';
  socket.on('data', (chunk) => (data += chunk.toString('utf8')));
  const received = new Promise<string>((resolve) => socket.on('close', () => resolve(data)));
  return { received, socket };
}

function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

describe('graceful shutdown', () => {
  it('finishes in-flight requests, refuses new ones, then closes the database', async () => {
    const entered = deferred();
    const release = deferred();
    const t = await buildTestApp({ extend: (app) => slowRoute(app, entered.resolve, release.promise) });
    const port = await listen(t.app);

    const slow = rawExchange(port, 'GET /api/v1/probe/slow HTTP/1.1\r\nHost: x\r\n\r\n');
    // A second client is half-way through sending its request when shutdown begins.
    const late = rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n');
    await entered.promise;
    const closing = closeGracefully(t.app, t.db);
    await expect.poll(() => connectionRefused(port), { timeout: 5_000 }).toBe(true);

    late.socket.write('\r\n');
    const turnedAway = await late.received;
    expect(turnedAway).toMatch(/^HTTP\/1\.1 503 /);
    expect(turnedAway).toMatch(/connection: close/i);
    const body = JSON.parse(turnedAway.slice(turnedAway.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
    expect(body).toEqual({ error: 'Server is shutting down', code: 'SERVICE_UNAVAILABLE', request_id: expect.any(String) });

    await expect(sql`select 1`.execute(t.db.db)).resolves.toBeDefined();
    release.resolve();
    // No keep-alive while stopping: the connection ends after the answer, so shutdown can complete.
    const answered = await slow.received;
    expect(answered).toMatch(/^HTTP\/1\.1 200 /);
    expect(answered).toMatch(/connection: close/i);
    expect(answered).toContain('{"done":true}');
    expect(await closing).toBe(true);
    await expect(sql`select 1`.execute(t.db.db)).rejects.toThrow();
  });

  it('gives up at the deadline when a request never finishes', async () => {
    const entered = deferred();
    const release = deferred();
    const t = await buildTestApp({ extend: (app) => slowRoute(app, entered.resolve, release.promise) });
    const port = await listen(t.app);
    const exchange = rawExchange(port, 'GET /api/v1/probe/slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await entered.promise;

    expect(await closeGracefully(t.app, t.db, 200)).toBe(false);

    release.resolve();
    exchange.socket.destroy();
    await t.close();
  });
});
