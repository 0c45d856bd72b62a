// The servers of the command round trip (bench/command-roundtrip.ts; the real one also serves
// bench/tunnel-throughput.ts, bench/device-files.ts and bench/remote-desktop.ts), each in a process of its own so that its CPU is its own: the real RMM server on a fresh database at the production log configuration,
// with one registered agent and an operator key; or the baseline, a bare Fastify route that forwards the
// request body over a bare `ws` socket to whoever connected and answers with the echo; or that echo
// writing, behind each answer, the two rows the real server writes for an exec (echo-rows.ts, issue 62).
// The benchmark process holds the agent's end of the socket and sends the HTTP requests.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { WebSocketServer, type WebSocket } from 'ws';
import { writeSettings } from '../../src/modules/settings/settings.repo.js';
import { openBackend } from './backends.js';
import { openRowWriter, type RowWriter } from './echo-rows.js';
import { serveRpcWhenForked } from './child-rpc.js';
import type { Backend } from './databases.js';
import { productionLog, startRmmServer } from './servers.js';

export type CommandServerKind = 'rmm' | 'echo' | 'echo-rows';

export interface CommandServer {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  /** Where the commands are posted. */
  execUrl: string;
  /** Where the agent (or the echo peer) connects its WebSocket. */
  wsUrl: string;
  agentKey: string;
  operatorKey: string;
  location: string;
  /** A `write` user's sign-in, when started with `technician`. */
  technician?: { username: string; password: string };
}

let close: (() => Promise<void>) | undefined;
/** The echo's row writer, when it writes rows. */
let rows: RowWriter | undefined;

async function startRmm(backend: Backend, deviceApiKeys = false, technician = false): Promise<CommandServer> {
  const db = await openBackend(backend, process.env);
  if (typeof db === 'string') throw new Error(db);
  const agentId = randomBytes(16).toString('hex');
  const server = await startRmmServer(db, [agentId], { ...productionLog(), operatorKey: true, technician }).catch(async (err: unknown) => {
    await db.close();
    throw err;
  });
  if (!server?.operatorKey) {
    await server?.close();
    await db.close();
    throw new Error('this checkout has no agent endpoints');
  }
  close = async () => {
    await server.close();
    await db.close();
  };
  // The device-files bench downloads with the operator key, which needs the setting (off by default).
  if (deviceApiKeys) await writeSettings(db.db, { device_api_keys: 'true' }, new Date());
  return {
    url: server.url,
    execUrl: `${server.url}/api/v1/agents/${agentId}/exec`,
    wsUrl: `${server.url.replace(/^http/, 'ws')}/api/v1/agent/ws?agent_id=${agentId}`,
    agentKey: server.apiKey,
    operatorKey: server.operatorKey,
    location: db.location,
    ...(server.technician ? { technician: server.technician } : {}),
  };
}

/**
 * The floor: HTTP in, one frame out over a bare ws socket, its echo back, HTTP out. No logger. With
 * `backend`, each command's two rows are written after its answer has gone out (echo-rows.ts).
 */
async function startEcho(backend?: Backend): Promise<CommandServer> {
  rows = backend ? await openRowWriter(backend) : undefined;
  const app = Fastify();
  const wss = new WebSocketServer({ server: app.server });
  let peer: WebSocket | undefined;
  const waiting = new Map<string, (data: string) => void>();
  wss.on('connection', (socket) => {
    peer = socket;
    socket.on('message', (data) => {
      const frame = JSON.parse(String(data)) as { id: string };
      waiting.get(frame.id)?.(String(data));
      waiting.delete(frame.id);
    });
  });
  app.post('/exec', async (request) => {
    if (!peer) throw new Error('no peer connected');
    const id = randomBytes(8).toString('hex');
    const startedAt = new Date();
    const answer = new Promise<string>((resolve) => waiting.set(id, resolve));
    peer.send(JSON.stringify({ type: 'command', id, command: 'exec', params: request.body }));
    const echoed = JSON.parse(await answer) as unknown;
    // setImmediate: after Fastify has written the response, as the real server's rows follow its answer.
    if (rows) setImmediate((writer, body) => writer.write(body, startedAt), rows, request.body as { command: string; timeout: number });
    return echoed;
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  close = async () => {
    for (const socket of wss.clients) socket.terminate();
    wss.close();
    await app.close();
    await rows?.close();
  };
  return { url: `http://127.0.0.1:${port}`, execUrl: `http://127.0.0.1:${port}/exec`, wsUrl: `ws://127.0.0.1:${port}/`, agentKey: 'unused', operatorKey: 'unused', location: rows?.location ?? 'no database' };
}

serveRpcWhenForked({
  start: (params: { kind: CommandServerKind; backend: Backend; deviceApiKeys?: boolean; technician?: boolean }) =>
    params.kind === 'rmm' ? startRmm(params.backend, params.deviceApiKeys, params.technician) : startEcho(params.kind === 'echo-rows' ? params.backend : undefined),
  /** Waits for the rows written behind answers so far (none but the echo's with rows): failures since the last call. */
  settle: async () => (rows ? rows.settle() : { errors: 0, firstError: undefined }),
  /** User + system CPU of this process so far, in ms. */
  cpu: () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  },
  stop: async () => {
    await close?.();
    close = undefined;
  },
});
