// RMM server entry: config → logger → database → migrations → app → listen. The only place that listens,
// handles signals or exits the process.
import { readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import { adminConnectionHandler, adminSocketPath } from './admin/admin-socket.js';
import { runAdminCommand } from './admin/commands.js';
import { buildServerApp } from './apps/server/build-app.js';
import { createCoreServices, type CoreServices } from './apps/server/services.js';
import { closeGracefully } from './http/graceful-close.js';
import { ConfigError, loadConfig, type Config } from './config/env.js';
import { createDb } from './db/create-db.js';
import { migrateToLatest } from './db/migrator.js';
import { INITIAL_ADMIN, type UserService } from './modules/users/users.service.js';
import { systemClock } from './platform/clock.js';
import { createLogger, type Logger } from './platform/logger.js';
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
  const https = await readTls(config);
  const db = await createDb(config, logger);
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

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    adminSocket?.close();
    closeGracefully(app, db).then(
      (inTime) => {
        if (inTime) logger.info('stopped');
        else logger.error('shutdown deadline passed; exiting with work unfinished');
        process.exit(inTime ? 0 : 1);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`${err.message}\n`);
  process.exit(2);
}
const logger = createLogger({ level: config.logLevel });
start(config, logger).catch((err: unknown) => {
  logger.fatal({ err }, `start-up failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
