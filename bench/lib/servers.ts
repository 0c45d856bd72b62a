// The real RMM app a load run hits, on a given database (with an `agent` API key and registered agents),
// and the production log configuration to run it with. The bare baseline is bench/lib/bare-agent-server.ts.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Server as HttpServer } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { pino, type DestinationStream } from 'pino';
import { buildServerApp } from '../../src/apps/server/build-app.js';
import { createCoreServices } from '../../src/apps/server/services.js';
import { loadConfig } from '../../src/config/env.js';
import type { DbHandle } from '../../src/db/create-db.js';
import { systemClock } from '../../src/platform/clock.js';
import { setHeapGrowth } from '../../src/platform/heap-growth.js';
import { createLogger } from '../../src/platform/logger.js';
import { hostnameFor } from './heartbeat-body.js';

export const HEARTBEAT_PATH = '/api/v1/agent/heartbeat';
const REGISTER_PATH = '/api/v1/agent/register';

export interface Server {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  apiKey: string;
  /** A key with `write` permission (commands to agents), when asked for. */
  operatorKey?: string;
  /** A `write` user who signs in with a password (routes that refuse API keys, e.g. remote desktop), when asked for. */
  technician?: { username: string; password: string };
  httpServer: HttpServer;
  close(): Promise<void>;
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('server has no TCP address');
  return `http://127.0.0.1:${address.port}`;
}

/**
 * The production log configuration for a server under test: level `info` (a line per request in and
 * out), serialised as in production and written to /dev/null, synchronously: production's stdout is
 * written asynchronously (pino's default), which made no difference to B2 when tried (2026-11-27), and
 * the synchronous write is the harsher of the two.
 */
export function productionLog(): { logLevel: string; logDestination: DestinationStream } {
  return { logLevel: 'info', logDestination: pino.destination({ dest: '/dev/null', sync: true }) };
}

/** The agent endpoints may not exist yet in this checkout; then there is nothing to measure. */
export function hasAgentEndpoints(app: FastifyInstance): boolean {
  return app.hasRoute({ method: 'POST', url: HEARTBEAT_PATH }) && app.hasRoute({ method: 'POST', url: REGISTER_PATH });
}

/**
 * The real server on `db`, listening on loopback, with `agentIds` registered. Returns undefined (and
 * closes what it opened) when the agent endpoints are missing.
 */
export async function startRmmServer(
  db: DbHandle,
  agentIds: readonly string[],
  options: { logLevel?: string; logDestination?: DestinationStream; operatorKey?: boolean; technician?: boolean } = {},
): Promise<Server | undefined> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-bench-'));
  const level = options.logLevel ?? 'silent';
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: level });
  // As src/main.ts does at start-up (the bare stand-ins get no such setting: V8 decides there), unless
  // the bench's server flags set the factor themselves, for both servers alike.
  if (!process.execArgv.some((flag) => flag.startsWith('--heap-growing-percent'))) setHeapGrowth(config.heapGrowthPercent);
  const secrets = { jwtSecret: randomBytes(32).toString('base64url'), encryptionKey: randomBytes(32) };
  const logger = createLogger({ level, ...(options.logDestination ? { destination: options.logDestination } : {}) });
  const app = await buildServerApp({ config, db, logger, secrets });
  const close = async () => {
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await app.ready();
    if (!hasAgentEndpoints(app)) {
      await close();
      return undefined;
    }
    const services = createCoreServices(db, secrets, systemClock);
    const admin = { kind: 'user' as const, userId: 0, username: 'bench', role: 'admin' as const, customerIds: null };
    const { key } = await services.apiKeys.create(admin, { name: 'bench', permissions: 'agent' });
    const operatorKey = options.operatorKey ? (await services.apiKeys.create(admin, { name: 'operator', permissions: 'write' })).key : undefined;
    const technician = options.technician ? { username: 'bench-technician', password: randomBytes(18).toString('base64url') } : undefined;
    if (technician) await services.users.create({ ...technician, role: 'write' });
    await registerAgents(app, key, agentIds);
    return { url: await listen(app), apiKey: key, ...(operatorKey ? { operatorKey } : {}), ...(technician ? { technician } : {}), httpServer: app.server, close };
  } catch (err) {
    await close();
    throw err;
  }
}

async function registerAgents(app: FastifyInstance, apiKey: string, agentIds: readonly string[]): Promise<void> {
  const register = async (agentId: string, i: number) => {
    const res = await app.inject({
      method: 'POST',
      url: REGISTER_PATH,
      headers: { 'x-api-key': apiKey },
      payload: { agent_id: agentId, hostname: hostnameFor(i), platform: 'freebsd' },
    });
    if (res.statusCode !== 200) throw new Error(`register ${agentId}: HTTP ${res.statusCode} ${res.body}`);
  };
  const parallel = 16;
  for (let i = 0; i < agentIds.length; i += parallel) {
    await Promise.all(agentIds.slice(i, i + parallel).map((id, j) => register(id, i + j)));
  }
}
