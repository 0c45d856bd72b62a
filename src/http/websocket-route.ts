// WebSocket endpoints are declared with `wsHandler` plus this plain-HTTP handler instead of
// `websocket: true`: @fastify/websocket hides `websocket: true` routes from the OpenAPI document and
// answers a request without an upgrade with an empty 404. Declared this way they are documented with
// their access, schema and description, and a plain request (after the same authentication and checks
// as an upgrade) gets 426 with the contract's error body.
//
// A refused upgrade (401, 403, 404, 429, …) is answered on a socket that Node has already taken out of
// its HTTP parser, so it can never carry a second request: the answer says `Connection: close` and the
// socket is ended once the answer is out. Saying keep-alive there made keep-alive clients send their
// next request into a closed socket (ECONNRESET).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../platform/errors.js';

export const WEBSOCKET_ONLY_NOTE = ' A request without `Upgrade: websocket` gets 426 UPGRADE_REQUIRED after the same checks.';

export async function requireWebSocketUpgrade(): Promise<never> {
  throw new AppError('UPGRADE_REQUIRED', 'This endpoint is a WebSocket: connect with an Upgrade: websocket request', { headers: { upgrade: 'websocket' } });
}

/**
 * Whether a browser page of `origin` may open a WebSocket here: the server's own origin (`own`), or one
 * of ALLOWED_ORIGINS (compared as parsed origins). Browsers send cookies-free upgrades from any page,
 * so a shell's socket checks it against cross-site WebSocket hijacking.
 */
export function originAllowed(origin: string, own: string, allowed: readonly string[]): boolean {
  let parsed: string;
  try {
    parsed = new URL(origin).origin;
  } catch {
    return false;
  }
  return parsed === new URL(own).origin || allowed.includes(parsed);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set for routes with a WebSocket handler (by refusedUpgradePlugin). */
    websocketEndpoint?: boolean;
  }
}

export const refusedUpgradePlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRoute', (route) => {
      route.config = { ...route.config, websocketEndpoint: Boolean(route.wsHandler ?? route.websocket) };
    });
    // An upgrade to a route without a WebSocket handler (the console's catch-all page route, any API
    // route) was accepted by @fastify/websocket and closed at once, holding the socket through the close
    // handshake; it is refused like an unknown path instead.
    app.addHook('preHandler', async (request) => {
      if (request.ws && !request.routeOptions.config.websocketEndpoint) {
        throw new AppError('NOT_FOUND', `No WebSocket endpoint at ${request.method} ${request.url.split('?')[0]}`);
      }
    });
    app.addHook('onSend', async (request, reply) => {
      if (request.ws) reply.header('connection', 'close');
    });
    // @fastify/websocket destroys the socket after such an answer, but not after a 404 of an unknown
    // path: ending it here (FIN after the answer) covers both and never cuts the answer short.
    app.addHook('onResponse', async (request) => {
      if (request.ws) request.raw.socket.end();
    });
  },
  { name: 'refused-upgrade', dependencies: ['@fastify/websocket'] },
);
