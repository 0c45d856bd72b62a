// The call-status service (callstatus.md, contract §12) as a Fastify app: the phone system's call
// endpoints and the time-tracking system's attendance endpoints (no credentials, as those systems call
// plain URLs), and the admin API behind CALLSTATUS_ADMIN_TOKEN. It never imports apps/server; it shares
// config, logging, errors, the error body and the database layer. main listens; tests inject().
import swagger from '@fastify/swagger';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject, serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { DbHandle } from '../../db/create-db.js';
import { errorBodySchema } from '../../http/error-body.js';
import { errorHandlerPlugin } from '../../http/error-handler.js';
import { frameworkErrorHandler, inputGuardPlugin } from '../../http/input-guard.js';
import { listPagingGuardPlugin } from '../../http/pagination.js';
import { generateRequestId, requestIdPlugin } from '../../http/request-id.js';
import { securityHeadersPlugin } from '../../http/security-headers.js';
import { systemClock, type Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import { productVersion } from '../../platform/version.js';
import { adminRoutes } from './admin.routes.js';
import { AttendanceService } from './attendance.js';
import { CallEvents } from './call-events.js';
import { callAnswerForUnroutable, publicRoutes } from './public.routes.js';
import { Lights } from './lights.js';
import type { CallstatusDatabase } from './schema.js';
import { WledClient } from './wled-client.js';
import { CallstatusMetrics } from './callstatus-metrics.js';
import { prometheusRoutes } from '../../modules/prometheus/prometheus.routes.js';

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

export const CALLSTATUS_OPENAPI_PATH = '/api/openapi.json';

export async function buildCallstatusApp(deps: CallstatusDeps): Promise<FastifyInstance> {
  // Small bodies only: attendance updates and admin records.
  const options: FastifyServerOptions = {
    loggerInstance: deps.logger,
    genReqId: generateRequestId,
    bodyLimit: 64 * 1024,
    frameworkErrors: frameworkErrorHandler(callAnswerForUnroutable),
  };
  const app = Fastify(options).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  await app.register(securityHeadersPlugin);
  await app.register(requestIdPlugin);
  await app.register(errorHandlerPlugin);
  await app.register(inputGuardPlugin);
  await app.register(listPagingGuardPlugin);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Call-status service',
        version: productVersion(),
        description:
          'Phone-system call start/end and time-tracking attendance switch per-user WLED status lights. Call and attendance endpoints take no credentials (the systems that call them send plain URLs; run the service on a trusted network). The admin API under /api/admin needs `Authorization: Bearer <CALLSTATUS_ADMIN_TOKEN>` and answers 404 while that variable is unset. Errors have the body `{"error", "code", "request_id"}`. Text cannot hold a NUL or a lone UTF-16 surrogate, and percent-escapes must be UTF-8: elsewhere that is 400 `VALIDATION_ERROR` with `details`, but the call endpoints answer 200 text whatever the extension (the specification: always 200).',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    },
    transform: (args) => jsonSchemaTransform({ ...args, schema: args.schema ? { ...args.schema, response: { ...(args.schema.response as object | undefined), '4xx': errorBodySchema } } : args.schema }),
    transformObject: jsonSchemaTransformObject,
  });
  app.get(CALLSTATUS_OPENAPI_PATH, { schema: { summary: 'This OpenAPI 3 document', response: { 200: z.record(z.string(), z.unknown()) } } }, async () => app.swagger() as unknown as Record<string, unknown>);

  const clock = deps.clock ?? systemClock;
  const metrics = new CallstatusMetrics();
  const lights = new Lights(deps.db.db, deps.wled ?? new WledClient(), clock, deps.logger, metrics);
  await app.register(prometheusRoutes, { registry: metrics.registry, token: deps.metricsToken });
  await app.register(publicRoutes, { calls: new CallEvents(deps.db.db, lights, clock, metrics), attendance: new AttendanceService(deps.db.db, clock) });
  await app.register(adminRoutes, { db: deps.db.db, adminToken: deps.adminToken, prefix: '/api/admin' });
  return app;
}
