// The call-status app's HTTP ground: security headers, request ids, the contract's error body, input
// and paging guards, and its OpenAPI document at /api/openapi.json.
import swagger from '@fastify/swagger';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorBodySchema } from '../../http/error-body.js';
import { errorHandlerPlugin } from '../../http/error-handler.js';
import { inputGuardPlugin } from '../../http/input-guard.js';
import { listPagingGuardPlugin } from '../../http/pagination.js';
import { requestIdPlugin } from '../../http/request-id.js';
import { securityHeadersPlugin } from '../../http/security-headers.js';
import { productVersion } from '../../platform/version.js';
import { callstatusFeature } from './callstatus-feature.js';

export const CALLSTATUS_OPENAPI_PATH = '/api/openapi.json';

const DESCRIPTION =
  'Phone-system call start/end and time-tracking attendance switch per-user WLED status lights. Call and attendance endpoints take no credentials (the systems that call them send plain URLs; run the service on a trusted network). The admin API under /api/admin needs `Authorization: Bearer <CALLSTATUS_ADMIN_TOKEN>` and answers 404 while that variable is unset. Errors have the body `{"error", "code", "request_id"}`. Text cannot hold a NUL or a lone UTF-16 surrogate, and percent-escapes must be UTF-8: elsewhere that is 400 `VALIDATION_ERROR` with `details`, but the call endpoints answer 200 text whatever the extension (the specification: always 200).';

export const callstatusHttpFeature = callstatusFeature({
  name: 'http',
  needs: [],
  async setup({ app }) {
    await app.register(securityHeadersPlugin);
    await app.register(requestIdPlugin);
    await app.register(errorHandlerPlugin);
    await app.register(inputGuardPlugin);
    await app.register(listPagingGuardPlugin);
    await app.register(swagger, {
      openapi: {
        openapi: '3.0.3',
        info: { title: 'Call-status service', version: productVersion(), description: DESCRIPTION },
        components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      },
      transform: (args) => jsonSchemaTransform({ ...args, schema: args.schema ? { ...args.schema, response: { ...(args.schema.response as object | undefined), '4xx': errorBodySchema } } : args.schema }),
      transformObject: jsonSchemaTransformObject,
    });
    return {
      rootRoutes(root) {
        root.get(CALLSTATUS_OPENAPI_PATH, { schema: { summary: 'This OpenAPI 3 document', response: { 200: z.record(z.string(), z.unknown()) } } }, async () => app.swagger() as unknown as Record<string, unknown>);
      },
    };
  },
});
