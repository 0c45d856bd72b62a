// The real server for the alerting benchmark (bench/alerting.ts), as in production: the log at `info`
// (its lines written to /dev/null), background jobs on (status monitor and offline rules every 60 s,
// certificates every 60 s, the outbox dispatcher), and a webhook channel to a loopback receiver so
// notifications are really delivered. Beside the app it keeps what the benchmark measures with: an
// admin key for the alert-rule API, the heartbeats answered (counted on the HTTP server), the
// threshold evaluator (to wait until it is idle) and a count of the SQL statements the app ran.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import type { KyselyPlugin, PluginTransformQueryArgs, RawNode, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { pino } from 'pino';
import { buildServerApp } from '../../src/apps/server/build-app.js';
import { createCoreServices } from '../../src/apps/server/services.js';
import { loadConfig } from '../../src/config/env.js';
import type { DbHandle } from '../../src/db/create-db.js';
import { ThresholdEvaluator } from '../../src/modules/alerts/threshold-evaluator.js';
import { systemClock } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/logger.js';
import { hostnameFor } from './heartbeat-body.js';
import { HEARTBEAT_PATH, hasAgentEndpoints } from './servers.js';

/** SQL statements run through the app's Kysely, and those that wrote threshold state (alert_conditions). */
export interface QueryCount {
  statements: number;
  conditionWrites: number;
}

/**
 * Counts statements as Kysely hands them to the driver (raw `sql` included), without changing them:
 * one function call per statement, in both rounds of the comparison alike.
 */
export class QueryCounter implements KyselyPlugin {
  readonly count: QueryCount = { statements: 0, conditionWrites: 0 };

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.count.statements++;
    const node = args.node;
    // The evaluator writes its states with raw SQL (conditions.repo.ts): a RawNode, its text in fragments.
    if (node.kind === 'RawNode' && /^\s*(insert into|delete from) alert_conditions\b/.test((node as RawNode).sqlFragments[0] ?? '')) this.count.conditionWrites++;
    return node;
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }

  snapshot(): QueryCount {
    return { ...this.count };
  }
}

// The app builds its evaluator inside; the benchmark needs its idle(). Every rule change calls
// rulesChanged() on it, and the benchmark creates its rules before any measurement. Wrapped once, when
// the first alerting server starts (not on import: `npm run bench` imports every benchmark).
let lastEvaluator: ThresholdEvaluator | undefined;
let watching = false;
const remember = (evaluator: ThresholdEvaluator) => (lastEvaluator = evaluator);
function watchEvaluators(): void {
  if (watching) return;
  watching = true;
  const rulesChanged = ThresholdEvaluator.prototype.rulesChanged;
  ThresholdEvaluator.prototype.rulesChanged = function (this: ThresholdEvaluator): void {
    remember(this);
    rulesChanged.call(this);
  };
}

export interface AlertingServer {
  url: string;
  agentKey: string;
  /** Heartbeats answered 200 so far. */
  readonly heartbeats: () => number;
  /** performance.now() of the first heartbeat answered since the last call (undefined: none yet); starts a new round. */
  readonly firstHeartbeatAt: (startNewRound?: boolean) => number | undefined;
  /** Webhook messages the loopback receiver got (each groups up to 50 notifications). */
  readonly webhookMessages: () => number;
  readonly queries: QueryCounter;
  /** Resolves once every committed heartbeat batch has been evaluated against the threshold rules. */
  evaluatorIdle(): Promise<void>;
  /** The REST API with the admin key, in process (no socket). */
  call<T>(method: 'GET' | 'POST' | 'PUT', url: string, payload?: object): Promise<T>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<{ url: string; messages: () => number; close: () => Promise<void> }> {
  let messages = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      messages++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('receiver has no TCP address');
  return { url: `http://127.0.0.1:${address.port}/alerts`, messages: () => messages, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** The real server on `db` with `agentIds` registered, or undefined when this checkout has no agent endpoints. */
export async function startAlertingServer(handle: DbHandle, agentIds: readonly string[]): Promise<AlertingServer | undefined> {
  const queries = new QueryCounter();
  const db: DbHandle = { ...handle, db: handle.db.withPlugin(queries) };
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-bench-'));
  const receiver = await startReceiver();
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'info', WEBHOOK_ALLOW_LOOPBACK: 'true', PUBLIC_URL: 'https://rmm.example.net' });
  const secrets = { jwtSecret: randomBytes(32).toString('base64url'), encryptionKey: randomBytes(32) };
  const logger = createLogger({ level: 'info', destination: pino.destination({ dest: '/dev/null', sync: true }) });
  watchEvaluators();
  lastEvaluator = undefined;
  const app: FastifyInstance = await buildServerApp({ config, db, logger, secrets });
  const close = async () => {
    await app.close();
    await receiver.close();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await app.ready();
    if (!hasAgentEndpoints(app)) {
      await close();
      return undefined;
    }
    let answered = 0;
    let firstAt: number | undefined;
    app.server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
      if (request.url !== HEARTBEAT_PATH) return;
      response.once('finish', () => {
        if (response.statusCode !== 200) return;
        answered++;
        firstAt ??= performance.now();
      });
    });
    const services = createCoreServices(handle, secrets, systemClock);
    const bench = { kind: 'user' as const, userId: 0, username: 'bench', role: 'admin' as const, customerIds: null };
    const agentKey = (await services.apiKeys.create(bench, { name: 'bench agents', permissions: 'agent' })).key;
    const adminKey = (await services.apiKeys.create(bench, { name: 'bench admin', permissions: 'admin' })).key;
    const inject = async (method: 'GET' | 'POST' | 'PUT', url: string, headers: Record<string, string>, payload?: object) => {
      const res = await app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
      if (res.statusCode >= 300) throw new Error(`${method} ${url}: HTTP ${res.statusCode} ${res.body.slice(0, 300)}`);
      return res.json() as unknown;
    };
    for (let i = 0; i < agentIds.length; i += 16) {
      await Promise.all(
        agentIds.slice(i, i + 16).map((agentId, j) =>
          inject('POST', '/api/v1/agent/register', { 'x-api-key': agentKey }, { agent_id: agentId, hostname: hostnameFor(i + j), platform: 'freebsd' }),
        ),
      );
    }
    const call = async <T>(method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => (await inject(method, `/api/v1${url}`, { 'x-api-key': adminKey }, payload)) as T;
    await call('POST', '/notification-channels', { name: 'on-call webhook', type: 'webhook', settings: { url: receiver.url } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    if (!address || typeof address === 'string') throw new Error('server has no TCP address');
    return {
      url: `http://127.0.0.1:${address.port}`,
      agentKey,
      heartbeats: () => answered,
      firstHeartbeatAt: (startNewRound = false) => {
        const at = firstAt;
        if (startNewRound) firstAt = undefined;
        return at;
      },
      webhookMessages: receiver.messages,
      queries,
      async evaluatorIdle() {
        if (!lastEvaluator) throw new Error('no threshold evaluator seen: create or change a rule first');
        // The last batch's `committed` runs just before its answers go out; one turn later it is queued.
        await new Promise((resolve) => setImmediate(resolve));
        await lastEvaluator.idle();
      },
      call,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
