// RMM server entry: config → logger → database → migrations → app → listen. The only place that listens,
// handles signals or exits the process.
import { readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import { adminConnectionHandler, adminSocketPath } from './admin/admin-socket.js';
import { runAdminCommand } from './admin/commands.js';
import { buildServerApp } from './apps/server/build-app.js';
import { createCoreServices, type CoreServices } from './apps/server/services.js';
import { exitGracefullyOnSignals, runEntryPoint } from './http/graceful-close.js';
import type { Config } from './config/env.js';
import { createDb } from './db/create-db.js';
import { migrateToLatest } from './db/migrator.js';
import { INITIAL_ADMIN, type UserService } from './modules/users/users.service.js';
import { systemClock } from './platform/clock.js';
import { setHeapGrowth } from './platform/heap-growth.js';
import type { Logger } from './platform/logger.js';
import { loadServerSecrets } from './platform/server-secrets.js';

async function readTls(config: Config): Promise<{ key: Buffer; cert: Buffer } | undefined> {
  if (!config.tls) return undefined;
  const [key, cert] = await Promise.all([readFile(config.tls.keyFile), readFile(config.tls.certFile)]);
  return { key, cert };
}

async function createInitialAdmin(users: UserService, config: Config, logger: Logger): Promise<void> {
  const created = await users.ensureInitialAdmin(config.adminPassword);
  if (!created) return;
  if (created.generatedPassword) {
    // The one time a password is logged (contract §1): the operator needs it to sign in at all.
    logger.warn(
      `created user "${INITIAL_ADMIN}" with the generated password ${created.generatedPassword} — ` +
        'sign in and change it; it is not shown again',
    );
  } else {
    logger.info(`created user "${INITIAL_ADMIN}" with the password from ADMIN_PASSWORD`);
  }
}

async function listenAdminSocket(socketPath: string, core: CoreServices, logger: Logger): Promise<net.Server | undefined> {
  // A socket left by a crashed server; we hold the DATA_DIR lock, so it is not in use.
  await rm(socketPath, { force: true });
  const server = net.createServer(
    adminConnectionHandler(async (request) => {
      const output: string[] = [];
      const code = await runAdminCommand(request, { services: core, out: (line) => output.push(line) });
      return { code, output };
    }, logger),
  );
  // Created with mode 0600: only the account that owns DATA_DIR may run admin commands.
  const previousUmask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, resolve);
    });
    return server;
  } catch (err) {
    logger.warn({ err }, 'admin socket unavailable: the CLI cannot reach this server while it runs');
    return undefined;
  } finally {
    process.umask(previousUmask);
  }
}

async function start(config: Config, logger: Logger): Promise<void> {
  setHeapGrowth(config.heapGrowthPercent);
  const https = await readTls(config);
  const db = await createDb(config, logger, 'rmm');
  logger.info({ database: db.location }, 'database opened');
  const migration = await migrateToLatest(db);
  logger.info(
    { applied: migration.applied, timescale: migration.timescale },
    `migrations: ${migration.applied.length} applied; TimescaleDB ${migration.timescale ? 'available' : 'not available'}`,
  );

  const secrets = await loadServerSecrets(config);
  const core = createCoreServices(db, secrets, systemClock);
  await createInitialAdmin(core.users, config, logger);

  const app = await buildServerApp({ config, db, logger, secrets, ...(https ? { https } : {}) });
  await app.listen({ port: config.port, host: config.host });
  // Only this process may open the embedded database, so the CLI's admin commands come in here.
  const adminSocket = db.dialect === 'pglite' ? await listenAdminSocket(adminSocketPath(config.dataDir), core, logger) : undefined;

  exitGracefullyOnSignals(app, db, logger, () => adminSocket?.close());
}

runEntryPoint(start);
