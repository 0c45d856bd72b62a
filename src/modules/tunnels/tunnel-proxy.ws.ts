// GET /api/v1/proxy/{tunnel_id} (contract §8): a WebSocket whose connection is one session through the
// tunnel, raw bytes as binary messages, for clients that cannot reach the proxy port (or that only have
// HTTPS to the server). Everything is checked before the upgrade, so a refused client gets a plain HTTP
// answer in the contract's error body: 401 without valid credentials, 403 for read and agent keys and for
// anyone but the user or key that opened the tunnel, 404 for an unknown tunnel or one whose agent is
// outside the caller's customer scope. In cluster mode a tunnel of another instance is forwarded there
// (proxy-forward.ts), which makes the same checks itself.
import type {} from '@fastify/websocket'; // the route option `wsHandler` and its handler types
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { requireWebSocketUpgrade, WEBSOCKET_ONLY_NOTE } from '../../http/websocket-route.js';
import { AppError } from '../../platform/errors.js';
import type { Logger } from '../../platform/logger.js';
import { MAX_MESSAGE_BYTES } from '../agent-hub/agent-protocol.js';
import type { AgentService } from '../agents/agents.service.js';
import { levelOf } from '../auth/access-policy.js';
import { actorOf } from '../auth/caller.js';
import { CLOSE_CLIENT_TOO_SLOW, WebSocketClient } from './client-end.js';
import { connectToHolder, pipeToHolder } from './proxy-forward.js';
import { FORWARDED_BY_HEADER, type RemoteTunnels } from './remote-tunnels.js';
import type { TunnelManager } from './tunnel-manager.js';

export const tunnelIdSchema = z.string().regex(/^[0-9a-f]{1,64}$/, 'must be a tunnel id');

export const tunnelProxyRoutes: FastifyPluginAsyncZod<{ tunnels: TunnelManager; agents: AgentService; logger: Logger; remote?: RemoteTunnels }> = async (
  app,
  { tunnels, agents, logger, remote },
) => {
  app.route({
    method: 'GET',
    url: '/proxy/:tunnel_id',
    // Write, checked below: a session through a tunnel reaches into the customer's network like opening
    // one does. Read users pass the route's level only for their own view-only desktops (issue 60).
    config: { access: 'read' },
    schema: {
      summary: 'WebSocket carrying one session through a tunnel (raw bytes as binary messages)',
      description:
        'For clients that cannot reach the tunnel\'s proxy_port: each connection is one session to the tunnel\'s target, exactly like a TCP connection on proxy_port. ' +
        'Authenticate with a bearer token (`Authorization` or `token`) or a write/admin key (`X-API-Key` or `api_key`); read and agent keys get 403, and a tunnel that does not exist or whose agent is outside a scoped key\'s customer gets 404, all before the upgrade. ' +
        'A tunnel belongs to whoever opened it: only that same user (any of their tokens) or that same API key may connect; anyone else gets 403 FORBIDDEN. A remote desktop (POST /agents/{id}/desktop) is bound tighter: only the sign-in session that opened it, once; a read user reaches only their own view-only desktop. No proxy port needs to be reachable for this path. ' +
        `Messages may be up to ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB (a larger one closes the socket with 1009). ` +
        'The socket closes with 1000 when the target closes (after its last bytes), and is dropped when the tunnel closes. A client that stops reading gets every byte later if the agent can pause one session (tunnel_pause); with an agent that cannot, once 8 MiB wait for it the socket is closed with ' +
        `${CLOSE_CLIENT_TOO_SLOW} and a reason after the bytes already sent (or dropped, seen as 1006, if the client does not read them within 30 s): never a normal close. ` +
        '`npm run cli -- tunnel connect` turns this into a local port, and resets its local connection on such a close. ' +
        'In cluster mode any instance serves this path: one that does not hold the tunnel forwards the WebSocket, with the request\'s own credentials, to the instance that does (over HTTP between instances, never over NATS), which makes every check above itself; its refusal comes back unchanged, and 503 when it cannot be reached.' +
        WEBSOCKET_ONLY_NOTE,
      tags: ['tunnels'],
      params: z.object({ tunnel_id: tunnelIdSchema }),
    },
    preHandler: async (request) => {
      const caller = callerOf(request);
      const reader = levelOf(caller) === 'read';
      if (reader && caller.kind === 'api_key') throw new AppError('FORBIDDEN', 'This needs a write or admin key');
      const tunnel = tunnels.find(request.params.tunnel_id);
      if (!tunnel) {
        // Forwarded once at most: a holder that no longer has the tunnel says so rather than asking around.
        const holder = remote && request.headers[FORWARDED_BY_HEADER] === undefined ? await remote.locate(request.params.tunnel_id) : undefined;
        if (!holder) throw new AppError('NOT_FOUND', 'Tunnel not found');
        return connectToHolder(request, holder, remote!.instanceId);
      }
      await agents.get(caller, tunnel.agentId); // 404 outside the caller's scope
      if (!tunnels.isOpenedBy(tunnel, caller)) {
        const session = tunnel.terms.sessionBound ? ' in the same sign-in session' : '';
        throw new AppError('FORBIDDEN', `Only the user or API key that opened this tunnel may use it${session}`);
      }
      if (reader && !tunnel.terms.viewOnly) throw new AppError('FORBIDDEN', 'This needs the write or admin role');
    },
    handler: requireWebSocketUpgrade,
    wsHandler: (socket, request) => {
      if (pipeToHolder(socket, request)) {
        logger.info({ tunnelId: request.params.tunnel_id, ...actorOf(callerOf(request)) }, 'tunnel session over the proxy socket, forwarded to the instance holding the tunnel');
        return;
      }
      const tunnel = tunnels.find(request.params.tunnel_id);
      if (!tunnel) return socket.close(1011, 'tunnel closed');
      logger.info({ tunnelId: tunnel.id, agentId: tunnel.agentId, ...actorOf(callerOf(request)) }, 'tunnel session over the proxy socket');
      tunnels.accept(tunnel, new WebSocketClient(socket));
    },
  });
};
