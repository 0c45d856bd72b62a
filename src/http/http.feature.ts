// The HTTP ground every other feature stands on: WebSocket upgrades, one set of security headers,
// declared access per route, request ids, the contract's error body, input guards, list paging
// guards, the OpenAPI document, and the per-minute summary of agent traffic in the log.
import fastifyWebsocket from '@fastify/websocket';
import { serverFeature } from '../apps/server/server-feature.js';
import { MAX_MESSAGE_BYTES } from '../modules/agent-hub/agent-protocol.js';
import { productVersion } from '../platform/version.js';
import type { AgentTrafficLogController } from './agent-traffic-log.js';
import { errorHandlerPlugin } from './error-handler.js';
import { inputGuardPlugin } from './input-guard.js';
import { openApiPlugin } from './openapi.js';
import { listPagingGuardPlugin } from './pagination.js';
import { requestIdPlugin } from './request-id.js';
import { routeAccessPlugin } from './route-access.js';
import { securityHeadersPlugin } from './security-headers.js';
import { refusedUpgradePlugin } from './websocket-route.js';

/** The request log's controller is made with the Fastify instance (its logController option). */
export const httpFeature = (trafficLog: AgentTrafficLogController) =>
  serverFeature({
    name: 'http',
    needs: [],
    async setup({ app }) {
      // First: its onRequest hook marks upgrade requests, and its onResponse hook destroys the socket of a
      // refused upgrade. Registered after the auth hook, a 401 left the refused socket open (and shutdown waiting).
      await app.register(fastifyWebsocket, { options: { maxPayload: MAX_MESSAGE_BYTES } });
      await app.register(securityHeadersPlugin); // before any hook that may answer a request itself
      await app.register(refusedUpgradePlugin);
      await app.register(routeAccessPlugin);
      await app.register(requestIdPlugin);
      await app.register(errorHandlerPlugin);
      await app.register(inputGuardPlugin);
      await app.register(listPagingGuardPlugin);
      await app.register(openApiPlugin, { version: productVersion() });
      return {
        start: () => trafficLog.start(),
        // The last partial minute's agent traffic is summed up on close, whether or not the timer ran.
        stop: () => trafficLog.stop(),
      };
    },
  });
