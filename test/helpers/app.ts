// Builds the real server app on a fresh test database, for inject()-driven tests.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildServerApp } from '../../src/apps/server/build-app.js';
import { loadConfig, type Config } from '../../src/config/env.js';
import type { DbHandle } from '../../src/db/create-db.js';
import type { PtyLoader } from '../../src/modules/terminal/pty-module.js';
import type { Clock } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/logger.js';
import type { ServerSecrets } from '../../src/platform/server-secrets.js';
import { createTestDb } from './db.js';
import { afterEveryFile } from './file-cleanup.js';

export interface TestApp {
  app: FastifyInstance;
  db: DbHandle;
  /** The configuration the app runs with (its DATA_DIR is a fresh temporary directory). */
  config: Config;
  /** Log lines written so far (only when built with `captureLogs`). */
  logs(): string[];
  close(): Promise<void>;
}

/** Data directories made by testConfig() in this test file. */
const dataDirs: string[] = [];

// After the file's own after-all hooks: the apps and servers using these directories are closed by then.
// Some tests build a second app on the same config, so the directories live as long as the file, not as
// one app.
afterEveryFile(async () => {
  await Promise.all(dataDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

export async function testConfig(env: Record<string, string> = {}): Promise<Config> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-data-'));
  dataDirs.push(dataDir);
  return loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env });
}

/** Fresh random server secrets, as a new installation would generate them. */
export function testSecrets(): ServerSecrets {
  return { jwtSecret: randomBytes(32).toString('base64url'), encryptionKey: randomBytes(32) };
}

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: Clock;
  /** Start the app's own periodic jobs (the status monitor); off by default so tests drive them. */
  backgroundJobs?: boolean;
  captureLogs?: boolean;
  /** Level of the captured log (default info, the production level). */
  logLevel?: 'info' | 'debug';
  /** Extra routes or hooks to add before the app is made ready (probe routes for framework behaviour). */
  extend?: (app: FastifyInstance) => void | Promise<void>;
  /** Registrations and heartbeats in progress at most before 503 (the product's default otherwise). */
  maxAgentRequestsInFlight?: number;
  /** Registrations in progress at most before 503 (the product's default otherwise). */
  maxRegistrationsInFlight?: number;
  /** The web terminal's PTY loader (the real library otherwise). */
  loadPty?: PtyLoader;
  /** The port startLiveServer listens on (default: one the kernel picks), for a PUBLIC_URL known in advance. */
  port?: number;
}

export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const lines: string[] = [];
  const config = await testConfig(options.env);
  const logger = options.captureLogs
    ? createLogger({
        level: options.logLevel ?? 'info',
        destination: new Writable({
          write(chunk: Buffer, _enc, done) {
            lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
            done();
          },
        }),
      })
    : createLogger({ level: 'silent' });
  const db = await createTestDb();
  const app = await buildServerApp({ config, db, logger, secrets: testSecrets(), clock: options.clock, bcryptRounds: 4, backgroundJobs: options.backgroundJobs ?? false,
    ...(options.maxAgentRequestsInFlight !== undefined ? { maxAgentRequestsInFlight: options.maxAgentRequestsInFlight } : {}),
    ...(options.maxRegistrationsInFlight !== undefined ? { maxRegistrationsInFlight: options.maxRegistrationsInFlight } : {}),
    ...(options.loadPty ? { loadPty: options.loadPty } : {}),
  });
  await options.extend?.(app);
  await app.ready();
  return {
    app,
    db,
    config,
    logs: () => [...lines],
    close: async () => {
      await closeWithin(app, CLOSE_PATIENCE_MS);
      await db.close();
    },
  };
}

const CLOSE_PATIENCE_MS = 20_000;

/**
 * Closes the app; if it is still waiting on connections after `patienceMs`, says so on stderr and cuts
 * them, so a client that never hung up cannot hang a test file's teardown (seen once under CI load).
 */
async function closeWithin(app: FastifyInstance, patienceMs: number): Promise<void> {
  const closing = app.close();
  let timer: NodeJS.Timeout | undefined;
  const patience = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), patienceMs);
  });
  const inTime = await Promise.race([closing.then(() => true as const), patience]);
  clearTimeout(timer);
  if (inTime) return;
  const open = await new Promise<number>((resolve) => app.server.getConnections((_err, count) => resolve(count)));
  process.stderr.write(`test server still closing after ${patienceMs / 1000} s with ${open} open connection(s); cutting them\n`);
  app.server.closeAllConnections();
  await closing;
}

/**
 * The loops a server built with `backgroundJobs: true` keeps sleeping on its clock: the status
 * monitor, the metrics maintenance, the agent keep-alive, the tunnel idle sweep, the task scheduler, the alert evaluation timer, the notification dispatcher, the device recordings' retention, the checks' revision poll and the check history's retention.
 */
export const BACKGROUND_LOOPS = 10;
