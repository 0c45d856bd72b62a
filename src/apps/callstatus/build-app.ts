// The call-status service (callstatus.md, contract §12) as a Fastify app: the phone system's call
// endpoints and the time-tracking system's attendance endpoints (no credentials, as those systems call
// plain URLs), and the admin API behind CALLSTATUS_ADMIN_TOKEN. It never imports apps/server; it shares
// config, logging, errors, the error body, the database layer and the shape of features
// (src/http/features.ts). main listens; tests inject().
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { composeFeatures } from '../../http/features.js';
import { frameworkErrorHandler } from '../../http/input-guard.js';
import { generateRequestId } from '../../http/request-id.js';
import { systemClock } from '../../platform/clock.js';
import { adminFeature } from './admin.feature.js';
import type { CallstatusDeps } from './callstatus-feature.js';
import { callsFeature } from './calls.feature.js';
import { callstatusHttpFeature } from './http.feature.js';
import { lightsFeature } from './lights.feature.js';
import { callAnswerForUnroutable } from './public.routes.js';

export type { CallstatusDeps } from './callstatus-feature.js';
export { CALLSTATUS_OPENAPI_PATH } from './http.feature.js';

export async function buildCallstatusApp(deps: CallstatusDeps): Promise<FastifyInstance> {
  const options: FastifyServerOptions = {
    loggerInstance: deps.logger,
    genReqId: generateRequestId,
    bodyLimit: 64 * 1024, // small bodies only: attendance updates and admin records
    frameworkErrors: frameworkErrorHandler(callAnswerForUnroutable),
  };
  const app = Fastify(options).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  const context = { app, deps, db: deps.db, logger: deps.logger, clock: deps.clock ?? systemClock };
  await composeFeatures(app, context, [callstatusHttpFeature, lightsFeature, callsFeature, adminFeature], {
    prefix: '/api/admin',
    start: true,
    logger: deps.logger,
  });
  return app;
}
