// The floor for the fleet benchmarks and for heartbeat-ingest (its heartbeat route is the "bare parse"
// baseline): just enough of the agent protocol for the reference agent to run against it, with nothing
// behind it. A bare Fastify app parses registration and heartbeat bodies and answers at once (no auth,
// no database, no logger); a bare `ws` server holds the agent sockets and pings them every 30 s, paced as
// the real hub does (the agents reconnect after 90 s of silence).
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify from 'fastify';
import { WebSocketServer } from 'ws';

const PING_INTERVAL_MS = 30_000;

export interface BareAgentServer {
  url: string;
  /** Any key is accepted; the agents still send one. */
  apiKey: string;
  httpServer: HttpServer;
  close(): Promise<void>;
}

export async function startBareAgentServer(): Promise<BareAgentServer> {
  const app = Fastify({ bodyLimit: 4 * 1024 * 1024 });
  app.post('/api/v1/agent/register', async (request) => {
    const body = request.body as { agent_id?: string; name?: string; hostname?: string };
    return { agent_id: body.agent_id ?? randomBytes(16).toString('hex'), name: body.name ?? body.hostname };
  });
  app.post('/api/v1/agent/heartbeat', async () => ({ ok: true, status: 'online', server_time: new Date().toISOString() }));
  app.get('/healthz', async () => ({ status: 'ok' }));

  const sockets = new WebSocketServer({ noServer: true });
  app.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!request.url?.startsWith('/api/v1/agent/ws')) return void socket.destroy();
    sockets.handleUpgrade(request, socket, head, (ws) => ws.on('error', () => ws.terminate()));
  });
  // Paced like the hub's (250 sockets every 50 ms), so both servers load the fleet alike.
  const keepAlive = setInterval(() => {
    const all = [...sockets.clients];
    const pingFrom = (start: number) => {
      for (const ws of all.slice(start, start + 250)) ws.ping();
      if (start + 250 < all.length) setTimeout(() => pingFrom(start + 250), 50).unref();
    };
    pingFrom(0);
  }, PING_INTERVAL_MS);

  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('server has no TCP address');
  return {
    url: `http://127.0.0.1:${address.port}`,
    apiKey: 'bare',
    httpServer: app.server,
    async close() {
      clearInterval(keepAlive);
      for (const ws of sockets.clients) ws.terminate();
      sockets.close();
      await app.close();
    },
  };
}
