// What each feature of the call-status app is given and may provide (the RMM server's shape, in small:
// see src/http/features.ts). The app is small enough to list its parts here.
import type { FastifyInstance } from 'fastify';
import type { DbHandle } from '../../db/create-db.js';
import { featureOf } from '../../http/features.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import type { CallstatusMetrics } from './callstatus-metrics.js';
import type { Lights } from './lights.js';
import type { CallstatusDatabase } from './schema.js';
import type { WledClient } from './wled-client.js';

export interface CallstatusDeps {
  db: DbHandle<CallstatusDatabase>;
  logger: Logger;
  /** Bearer token of the admin API; undefined disables it (404). */
  adminToken: string | undefined;
  clock?: Clock;
  wled?: WledClient;
  /** Bearer token of GET /metrics; unset: only clients on this machine (not through a proxy). */
  metricsToken?: string | undefined;
}

export interface CallstatusContext {
  app: FastifyInstance;
  deps: CallstatusDeps;
  db: DbHandle<CallstatusDatabase>;
  logger: Logger;
  clock: Clock;
}

export interface CallstatusParts {
  metrics: CallstatusMetrics;
  lights: Lights;
}

export const callstatusFeature = featureOf<CallstatusContext, CallstatusParts>();
