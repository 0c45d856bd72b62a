// Call-status service entry: config → logger → its own database (CALLSTATUS_DATABASE_URL, else embedded
// PGlite in DATA_DIR/callstatus) → its migrations → app → listen on CALLSTATUS_PORT. The only place of
// this app that listens, handles signals or exits the process.
import path from 'node:path';
import { buildCallstatusApp } from './apps/callstatus/build-app.js';
import type { CallstatusDatabase } from './apps/callstatus/schema.js';
import type { Config } from './config/env.js';
import { createDb } from './db/create-db.js';
import { CALLSTATUS_MIGRATIONS, migrateToLatest } from './db/migrator.js';
import { exitGracefullyOnSignals, runEntryPoint } from './http/graceful-close.js';
import type { Logger } from './platform/logger.js';

async function start(config: Config, logger: Logger): Promise<void> {
  // Its own directory (and lock) under DATA_DIR, so it runs beside the RMM server's embedded database.
  const db = await createDb<CallstatusDatabase>({ databaseUrl: config.callstatus.databaseUrl, dataDir: path.join(config.dataDir, 'callstatus') }, logger, 'callstatus');
  logger.info({ database: db.location }, 'database opened');
  const migration = await migrateToLatest(db, CALLSTATUS_MIGRATIONS);
  logger.info({ applied: migration.applied }, `migrations: ${migration.applied.length} applied`);
  if (!config.callstatus.adminToken) logger.warn('CALLSTATUS_ADMIN_TOKEN is not set: the admin API is disabled (users, devices and colors cannot be managed)');

  const app = await buildCallstatusApp({ db, logger, adminToken: config.callstatus.adminToken, metricsToken: config.metricsToken });
  await app.listen({ port: config.callstatus.port, host: config.host });

  exitGracefullyOnSignals(app, db, logger);
}

runEntryPoint(start);
