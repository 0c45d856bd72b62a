// The RMM server as a Fastify app: plugins, then each feature's routes. It never listens; main.ts does,
// and tests drive it with inject().
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Config } from '../../config/env.js';
import type { DbHandle } from '../../db/create-db.js';
import { errorHandlerPlugin } from '../../http/error-handler.js';
import { openApiPlugin } from '../../http/openapi.js';
import { generateRequestId, requestIdPlugin } from '../../http/request-id.js';
import { routeAccessPlugin } from '../../http/route-access.js';
import { healthRoutes } from '../../modules/health/health.routes.js';
import { HealthService } from '../../modules/health/health.service.js';
import type { Logger } from '../../platform/logger.js';
import { productVersion } from '../../platform/version.js';

export const API_PREFIX = '/api/v1';
const DEFAULT_BODY_LIMIT = 1024 * 1024;

export interface ServerDeps {
  config: Config;
  db: DbHandle;
  logger: Logger;
  /** TLS key and certificate (PEM) when the server terminates TLS itself. */
  https?: { key: Buffer; cert: Buffer };
}

export async function buildServerApp(deps: ServerDeps): Promise<FastifyInstance> {
  const options: FastifyServerOptions = {
    loggerInstance: deps.logger,
    genReqId: generateRequestId,
    trustProxy: toFastifyTrustProxy(deps.config.trustProxy),
    bodyLimit: DEFAULT_BODY_LIMIT,
    // Our error handler answers requests that arrive during shutdown, in the contract's error body.
    return503OnClosing: false,
    ...(deps.https ? { https: deps.https } : {}),
  };
  const app = Fastify(options).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  await app.register(routeAccessPlugin);
  await app.register(requestIdPlugin);
  await app.register(errorHandlerPlugin);
  await app.register(openApiPlugin, { version: productVersion() });

  await app.register(healthRoutes, { health: new HealthService(deps.db.db, deps.db.dialect) });

  return app;
}

/** A hop count becomes "trust the nearest N proxies" (Fastify's types take no number). */
function toFastifyTrustProxy(value: Config['trustProxy']): FastifyServerOptions['trustProxy'] {
  return typeof value === 'number' ? (_address: string, hop: number) => hop < value : value;
}
