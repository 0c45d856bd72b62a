// Call-status service entry: config → logger → its own database (CALLSTATUS_DATABASE_URL, else embedded
// PGlite in DATA_DIR/callstatus) → its migrations → app → listen on CALLSTATUS_PORT. The only place of
// this app that listens, handles signals or exits the process.
import path from 'node:path';
import { buildCallstatusApp } from './apps/callstatus/build-app.js';
import type { CallstatusDatabase } from './apps/callstatus/schema.js';
import { ConfigError, loadConfig, type Config } from './config/env.js';
import { createDb } from './db/create-db.js';
import { CALLSTATUS_MIGRATIONS, migrateToLatest } from './db/migrator.js';
import { closeGracefully } from './http/graceful-close.js';
import { createLogger, type Logger } from './platform/logger.js';

async function start(config: Config, logger: Logger): Promise<void> {
  // Its own directory (and lock) under DATA_DIR, so it runs beside the RMM server's embedded database.
  const db = await createDb<CallstatusDatabase>({ databaseUrl: config.callstatus.databaseUrl, dataDir: path.join(config.dataDir, 'callstatus') }, logger);
  logger.info({ database: db.location }, 'database opened');
  const migration = await migrateToLatest(db, CALLSTATUS_MIGRATIONS);
  logger.info({ applied: migration.applied }, `migrations: ${migration.applied.length} applied`);
  if (!config.callstatus.adminToken) logger.warn('CALLSTATUS_ADMIN_TOKEN is not set: the admin API is disabled (users, devices and colors cannot be managed)');

  const app = await buildCallstatusApp({ db, logger, adminToken: config.callstatus.adminToken });
  await app.listen({ port: config.callstatus.port, host: config.host });

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'shutting down');
    closeGracefully(app, db).then(
      (inTime) => process.exit(inTime ? 0 : 1),
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
