// `npm run demo`: the product alive in one command. Starts the real server (as `npm start` would, on the
// embedded database) in a throw-away data directory, signs in as the initial admin, creates a few
// customers, an agent key, pre-registered agents and a check policy per platform, starts that many
// simulated agents (their checks simulated too), and prints where
// to look and how to sign in. Its install commands work on this machine (see prepareInstalls). Ctrl-C stops everything and deletes the data directory.
//
// Environment: DEMO_PORT (default 8080), DEMO_AGENTS (30), DEMO_INTERVAL_S (heartbeat interval, 10).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { AGENT_VERSION } from '../agent/reference-agent.js';
import { Fleet } from '../fleet/fleet.js';
import { INITIAL_ADMIN } from '../modules/users/users.service.js';
import { referenceAgentLauncher } from './agent-launcher.js';
import { DEMO_CHECK_FAILURE_CHANCE, DEMO_POLICIES } from './default-policies.js';

const CUSTOMERS = [
  { number: '10001', name: 'Bäckerei Sonnenschein GmbH' },
  { number: '10002', name: 'Kanzlei Weber & Partner' },
  { number: '10003', name: 'Autohaus Nordring KG' },
  { number: '10004', name: 'Praxis Dr. Yilmaz' },
];
const SERVER_ENTRY = fileURLToPath(new URL('../main.ts', import.meta.url));

function positiveInteger(env: NodeJS.ProcessEnv, key: string, fallback: number, max: number): number {
  const value = env[key] === undefined ? fallback : Number(env[key]);
  if (!Number.isInteger(value) || value < 1 || value > max) throw new Error(`${key} must be a whole number from 1 to ${max}`);
  return value;
}

/** A small JSON client for the demo's set-up calls; any answer but 2xx stops the demo with its body. */
function api(base: string, token?: string) {
  return async <T>(method: string, route: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${base}/api/v1${route}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: HTTP ${res.status} ${text}`);
    return JSON.parse(text) as T;
  };
}

async function waitForServer(base: string, server: ChildProcess): Promise<void> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(200)) {
    if (server.exitCode !== null) throw new Error(`the server exited with code ${server.exitCode}`);
    const up = await fetch(`${base}/healthz`).then((r) => r.ok, () => false);
    if (up) return;
  }
  throw new Error('the server did not answer within 60 s');
}

/**
 * Makes the console's install commands real on this machine: backend_url is this server, and the Linux
 * agent binary is a launcher of this checkout's reference agent (same version as the demo's agents).
 */
async function prepareInstalls(base: string, token: string): Promise<void> {
  await api(base, token)('PUT', '/settings', { backend_url: base });
  const res = await fetch(`${base}/api/v1/firmware/upload?version=${AGENT_VERSION}&platform=linux`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
    body: referenceAgentLauncher(),
  });
  if (!res.ok) throw new Error(`firmware upload: HTTP ${res.status} ${await res.text()}`);
}

async function main(): Promise<void> {
  const port = positiveInteger(process.env, 'DEMO_PORT', 8080, 65_535);
  const agents = positiveInteger(process.env, 'DEMO_AGENTS', 30, 2000);
  const intervalS = positiveInteger(process.env, 'DEMO_INTERVAL_S', 10, 3600);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-demo-'));
  const password = randomBytes(12).toString('base64url');
  const base = `http://127.0.0.1:${port}`;
  // A demo on one machine tries webhooks with a receiver on that machine: loopback targets are allowed
  // unless the caller says otherwise (a real install refuses them, see WEBHOOK_ALLOW_LOOPBACK).
  const serverEnv: NodeJS.ProcessEnv = { WEBHOOK_ALLOW_LOOPBACK: 'true', ...process.env, DATA_DIR: path.join(dataDir, 'server'), PORT: String(port), HOST: '127.0.0.1', ADMIN_PASSWORD: password, LOG_LEVEL: 'warn' };
  for (const key of ['DATABASE_URL', 'JWT_SECRET', 'ENCRYPTION_KEY']) delete serverEnv[key]; // the embedded database, fresh secrets
  const server = spawn(process.execPath, ['--import', 'tsx', SERVER_ENTRY], { env: serverEnv, stdio: ['ignore', 'inherit', 'inherit'] });
  let fleet: Fleet | undefined;

  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await fleet?.stop().catch(() => undefined);
    if (server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    await rm(dataDir, { recursive: true, force: true });
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  try {
    await waitForServer(base, server);
    const { token } = await api(base)<{ token: string }>('POST', '/auth/login', { username: INITIAL_ADMIN, password });
    const call = api(base, token);
    const customers = [];
    for (const customer of CUSTOMERS) customers.push(await call<{ id: number }>('POST', '/customers', customer));
    const { key } = await call<{ key: string }>('POST', '/apikeys', { name: 'demo agents', permissions: 'agent' });
    for (let n = 1; n <= agents; n++) await call('POST', '/agents', { name: `demo-${n}`, customer_id: customers[n % customers.length]!.id });
    await prepareInstalls(base, token);
    for (const policy of DEMO_POLICIES) await call('POST', '/check-policies', policy);

    fleet = new Fleet({ serverUrl: base, apiKey: key, agents, intervalMs: intervalS * 1000, namePrefix: 'demo', stateDir: path.join(dataDir, 'agents'), startSpreadMs: 5000, checkFailureChance: DEMO_CHECK_FAILURE_CHANCE });
    await fleet.start();
    const online = await call<unknown[]>('GET', '/agents?status=online');
    process.stdout.write(
      [
        '',
        `RMM demo running: ${agents} simulated agents (${online.length} online), ${CUSTOMERS.length} customers, heartbeats every ${intervalS} s.`,
        `  checks           ${DEMO_POLICIES.length} policies, one per platform (failing checks: ${base}/api/v1/checks/failing)`,
        `  console and API  ${base}/  (API under ${base}/api/v1, its documentation at ${base}/docs)`,
        `  sign in          ${INITIAL_ADMIN} / ${password}`,
        `  data             ${dataDir} (deleted when the demo stops)`,
        'Stop with Ctrl-C.',
        '',
      ].join('\n'),
    );
  } catch (err) {
    process.stderr.write(`demo failed: ${(err as Error).message}\n`);
    await stop(1);
  }
}

void main();
