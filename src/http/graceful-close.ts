// Graceful stop: stop accepting, let in-flight requests finish, run every onClose (long-lived services),
// then close the database, all within a deadline; and the start-up and signal handling that both apps'
// entry points (main.ts, callstatus-main.ts) share.
import type { FastifyInstance } from 'fastify';
import { ConfigError, loadConfig, type Config } from '../config/env.js';
import { createLogger, type Logger } from '../platform/logger.js';

export const SHUTDOWN_DEADLINE_MS = 10_000;

/** Resolves true when everything closed in time, false when the deadline passed first. */
export async function closeGracefully(
  app: FastifyInstance,
  db: { close(): Promise<void> },
  deadlineMs = SHUTDOWN_DEADLINE_MS,
): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), deadlineMs);
  });
  const closing = (async () => {
    await app.close();
    await db.close();
    return true as const;
  })();
  try {
    return await Promise.race([closing, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** On SIGINT or SIGTERM: `beforeClose`, then a graceful close and exit (a second signal exits at once). */
export function exitGracefullyOnSignals(app: FastifyInstance, db: { close(): Promise<void> }, logger: Logger, beforeClose?: () => void): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    beforeClose?.();
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

/** Loads the configuration (exit 2 with its one line when invalid) and runs `start` (exit 1 when it fails). */
export function runEntryPoint(start: (config: Config, logger: Logger) => Promise<void>): void {
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
}
