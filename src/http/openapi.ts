// The OpenAPI 3 document is generated from the route schemas (zod), served at /api/v1/openapi.json and
// rendered by Swagger UI at /docs. Every documented operation also lists the contract's error body for
// 4xx/5xx and says whether it needs credentials.
import swagger, { type SwaggerOptions } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorBodySchema } from './error-body.js';
import { operationOf, TAGS } from './operations.js';
import { declareAccessForPluginRoutes, type RouteAccess } from './route-access.js';

export const OPENAPI_PATH = '/api/v1/openapi.json';

type TransformArgs = Parameters<typeof jsonSchemaTransform>[0];

const DESCRIPTION = `Remote monitoring and management backend.

Errors always have the body \`{"error", "code", "request_id"}\` (validation errors add \`details\`), and
every response carries \`x-request-id\`. Credentials: \`X-API-Key\` header (or \`api_key\` query for
WebSocket clients) or \`Authorization: Bearer <JWT>\` (or \`token\` query). Lists take \`limit\` (integer
≥ 1; larger values are clamped to the list's maximum). Request bodies are limited to 1 MiB unless a route
says otherwise. Text cannot hold a NUL (U+0000) or a lone UTF-16 surrogate, and percent-escapes must be
UTF-8: such a query value, path parameter, or JSON string or key is 400 \`VALIDATION_ERROR\` whose
\`details\` say where (the heartbeat's body excepted: it is stored as sent). Ids are at most 2147483647.

Paging: each list states its order, its default and its maximum \`limit\`, and answers a JSON array.
When more items follow, the answer carries \`Link: </api/v1/…?…&cursor=…>; rel="next"\` (RFC 8288): the
same request with an opaque \`cursor\`; follow it for the next page. Lists the specification says return
everything (agents, customers, users, keys, …) still do without \`limit\`.

Each operation's \`x-access\` says who may call it. API keys (by permission) and users (by role) climb
the same ladder, read < write < admin; a read key or read user only ever reads (GET):

| x-access | API keys | users (role) |
|---|---|---|
| \`public\` | no credentials needed | no credentials needed |
| \`agent\` | agent (read: GET only), write, admin | read (GET only), write, admin |
| \`agent_key\` | agent only: registering an agent is the agent's act | none (403) |
| \`read\` | read, write, admin | read, write, admin |
| \`write\` | write, admin | write, admin |
| \`admin\` | admin | admin |
| \`settings\` | write, admin | admin |
| \`user\` | none (403): the user's own account | every role |
| \`user_admin\` | none (403) | admin with every customer |
| \`session\` | none (401): the web terminal | admin with every customer |

Missing or invalid credentials are 401, valid ones without the permission 403 (\`x-server-wide: true\` on the operation). After 30 wrong or empty
API keys from one address (an IPv6 /64; behind a proxy the client's address per TRUST_PROXY) within 5
minutes, every wrong key from there is 429 \`TOO_MANY_ATTEMPTS\` with \`Retry-After\` (seconds) instead of
401, until the 5 minutes from its first failure have passed; the agent WebSocket gets that 429 before
the upgrade. A valid key is always accepted. Bearer tokens are not counted and still work from there.
Each throttled address is logged and audited in summary (action \`auth.api_key_rejected\`, once per 5
minutes while it goes on). Failed password sign-ins are counted per username and address (10), per
address (50) and per username (100, not for addresses the user signed in from); past a count, 429 with
a \`Retry-After\` that doubles with each further failure (1 minute up to an hour). A customer-scoped key,
and a user limited to a set of customers, sees only those customers: anything else is 404, lists and
the audit log are filtered to them, and server-wide resources (users, settings, the script library) are
403. Every non-GET request by a known caller is recorded in the audit log (method,
path without query, status, address; never bodies).`;

const ANY_CREDENTIAL: Array<Record<string, never[]>> = [{ apiKey: [] }, { apiKeyQuery: [] }, { bearer: [] }, { tokenQuery: [] }];

/** Which credentials an operation takes, from its declared access level. */
const SECURITY_BY_ACCESS: Record<RouteAccess, Array<Record<string, never[]>>> = {
  public: [],
  agent: ANY_CREDENTIAL,
  agent_key: [{ apiKey: [] }, { apiKeyQuery: [] }],
  read: ANY_CREDENTIAL,
  write: ANY_CREDENTIAL,
  admin: ANY_CREDENTIAL,
  settings: ANY_CREDENTIAL,
  user: [{ bearer: [] }, { tokenQuery: [] }],
  user_admin: [{ bearer: [] }, { tokenQuery: [] }],
  session: [{ bearer: [] }, { tokenQuery: [] }],
};

const errorResponse = (description: string) => ({
  description: `${description} (the contract's error body)`,
  content: { 'application/json': { schema: errorBodySchema } },
});

/** A WebSocket route's success: the upgrade. */
const SWITCHING_PROTOCOLS = { 101: z.null().describe('Switching Protocols: the connection becomes a WebSocket') };

function documentErrorsAndAccess(args: TransformArgs) {
  const { schema, route } = args;
  if (!schema || schema.hide) return jsonSchemaTransform(args);
  const [operationId, description] = operationOf(String(route.method), route.url) ?? [];
  const websocket = (route as { websocket?: boolean }).websocket === true;
  const withErrors = {
    ...schema,
    ...(operationId ? { operationId } : {}),
    ...(schema.description === undefined && description ? { description } : {}),
    response: {
      ...(websocket ? SWITCHING_PROTOCOLS : {}),
      ...(schema.response as object | undefined),
      '4xx': errorResponse('Client error'),
      '5xx': errorResponse('Server error'),
    },
    security: SECURITY_BY_ACCESS[route.config?.access ?? 'public'],
    'x-access': route.config?.access,
    ...(route.config?.serverWide ? { 'x-server-wide': true } : {}),
  };
  return jsonSchemaTransform({ ...args, schema: withErrors });
}

/**
 * The zod provider registers an input variant (`…Input`) of every named schema; those no operation
 * refers to are dropped, so the document lists only components in use.
 */
function withoutUnusedInputs(args: Parameters<typeof jsonSchemaTransformObject>[0]): ReturnType<typeof jsonSchemaTransformObject> {
  const document = jsonSchemaTransformObject(args);
  const schemas = (document as { components?: { schemas?: Record<string, unknown> } }).components?.schemas;
  if (!schemas) return document;
  for (let removed = true; removed; ) {
    removed = false;
    const text = JSON.stringify(document);
    for (const name of Object.keys(schemas)) {
      if (name.endsWith('Input') && !text.includes(`"#/components/schemas/${name}"`)) {
        delete schemas[name];
        removed = true;
      }
    }
  }
  return document;
}

export const openApiPlugin = fp(
  async (app: FastifyInstance, opts: { version: string }) => {
    const options: SwaggerOptions = {
      openapi: {
        openapi: '3.0.3',
        info: { title: 'RMM backend API', version: opts.version, description: DESCRIPTION, contact: { name: 'The operators of this server' } },
        // Relative: the document is served by the server it describes.
        servers: [{ url: '/', description: 'This server' }],
        tags: [...TAGS],
        components: {
          securitySchemes: {
            apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
            apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
            bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
            tokenQuery: { type: 'apiKey', in: 'query', name: 'token' },
          },
        },
        security: [{ apiKey: [] }, { bearer: [] }],
      },
      transform: documentErrorsAndAccess,
      transformObject: withoutUnusedInputs,
    };
    await app.register(swagger, options);

    app.get(
      OPENAPI_PATH,
      {
        config: { access: 'public' },
        schema: {
          summary: 'This OpenAPI 3 document',
          tags: ['meta'],
          response: { 200: z.record(z.string(), z.unknown()).describe('OpenAPI 3.0 document') },
        },
      },
      async () => app.swagger(),
    );

    await app.register(async (docs) => {
      declareAccessForPluginRoutes(docs, 'public');
      // Without the top bar: its logo is an SVG with an inline <style>, which the app's CSP refuses
      // (security-headers.ts), and its box for loading another document's URL has no use here.
      await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true, layout: 'BaseLayout' } });
    });
  },
  { name: 'openapi', dependencies: ['route-access'] },
);
