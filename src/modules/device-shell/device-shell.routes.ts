// GET /api/v1/agents/{id}/shell: a shell on the agent's device over a WebSocket, for the console (issue 59).
// The same client framing as the server's terminal. Everything is checked before the upgrade, answered
// as plain HTTP with the contract's error body: a foreign Origin, who may (the device-sessions guard),
// where the agent's socket is, and the limits. In a cluster, an instance that does not hold the agent's
// socket forwards the WebSocket to the one that does (tunnels/proxy-forward.ts), which checks it all again.
import type {} from '@fastify/websocket';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { originAllowed, requireWebSocketUpgrade, WEBSOCKET_ONLY_NOTE } from '../../http/websocket-route.js';
import { AppError } from '../../platform/errors.js';
import type { AgentHub } from '../agent-hub/agent-hub.js';
import type { DeviceSettings } from '../settings/device-settings.js';
import type { Agent } from '../agents/agents.service.js';
import { agentIdSchema } from '../agents/agents.schemas.js';
import type { DeviceAccess } from '../device-sessions/device-access.js';
import { streamHolder } from '../device-sessions/forward-to-holder.js';
import type { RemoteTunnels } from '../tunnels/remote-tunnels.js';
import { connectToHolder, pipeToHolder } from '../tunnels/proxy-forward.js';
import type { DeviceShells } from './device-shells.js';

export interface DeviceShellRouteOptions {
  shells: DeviceShells;
  deviceAccess: DeviceAccess;
  hub: AgentHub;
  allowedOrigins: readonly string[];
  /** Cluster mode: the instances holding other agents' sockets, where their shells are forwarded. */
  remote?: RemoteTunnels | undefined;
}

const size = (fallback: number) => z.coerce.number().int().min(1).max(1000).default(fallback);

const DESCRIPTION =
  'A shell on the agent\'s device (its PTY: $SHELL or /bin/sh on Linux and FreeBSD, PowerShell on Windows), for signed-in users with the write or admin role whose customers include the agent\'s. ' +
  'Sign in with `token=<JWT>` (browsers cannot set headers on WebSockets) or `Authorization: Bearer`. Refused before the upgrade, with the error body: ' +
  'an `Origin` that is neither this server\'s nor in ALLOWED_ORIGINS (403), any API key (403), a read-only user (403), an agent outside the user\'s customers (404), ' +
  'an agent that does not announce the `shell` capability (409 AGENT_UNSUPPORTED), an agent that is not connected (409 AGENT_NOT_CONNECTED), ' +
  'more shells than the settings `device_shells_per_agent` or `device_shells_per_user` allow (429 RATE_LIMITED). ' +
  'Client → server: binary messages are keystrokes; text messages are JSON control frames `{"type":"resize","cols":N,"rows":N}`. ' +
  'Server → client: first the text message `{"type":"session","session_id":"…"}` (the id of its device session and recording), then the output as binary messages. ' +
  'Close codes: 1000 when the shell exited or the client closed; 4008 after `device_idle_minutes` without input or output; 4009 after `device_session_max_minutes`; 1011 when the agent went away or the shell could not be opened (the reason says why). ' +
  'In cluster mode any instance serves this path: one that does not hold the agent\'s socket forwards the WebSocket, with the request\'s own credentials, to the instance that does (over HTTP between instances, never over NATS), which makes every check above itself; its refusal comes back unchanged, and 503 when it cannot be reached. ' +
  'Every session is audited (`device.shell.start`, `device.shell.end` with its reason and bytes) and, unless the setting `device_recording` is off, recorded as an asciicast v2 file without the keystrokes (see GET /api/v1/device-sessions).' +
  WEBSOCKET_ONLY_NOTE;

export const deviceShellRoutes: FastifyPluginAsyncZod<DeviceShellRouteOptions> = async (app, options) => {
  const { shells, deviceAccess, hub, remote } = options;
  /** The agent the checks found and the settings they read, from the pre-handler to the WebSocket handler. */
  const checked = new WeakMap<FastifyRequest, { agent: Agent; settings: DeviceSettings }>();

  app.route({
    method: 'GET',
    url: '/agents/:id/shell',
    config: { access: 'write' },
    schema: {
      operationId: 'openDeviceShell',
      summary: "Device shell: a shell on the agent's device over a WebSocket (signed-in write/admin users)",
      description: DESCRIPTION,
      tags: ['devices'],
      params: z.object({ id: agentIdSchema }),
      querystring: z.object({ token: z.string().optional(), cols: size(80), rows: size(24) }),
    },
    preHandler: async (request) => {
      const origin = request.headers.origin;
      if (origin !== undefined && !originAllowed(origin, `${request.protocol}://${request.host}`, options.allowedOrigins)) {
        throw new AppError('FORBIDDEN', `Origin ${origin} may not open a device shell; add it to ALLOWED_ORIGINS`);
      }
      const caller = callerOf(request);
      const agent = await deviceAccess.check(caller, request.params.id, 'shell', 'shell');
      // In a cluster the shell runs where the agent's socket is: forwarded there, which checks it all again.
      const holder = await streamHolder(hub, remote, request, agent.id);
      if (holder) return connectToHolder(request, holder, remote!.instanceId);
      if (caller.kind === 'user') checked.set(request, { agent, settings: await shells.checkLimits(agent.id, caller.userId) });
    },
    handler: requireWebSocketUpgrade,
    wsHandler: (socket, request) => {
      if (pipeToHolder(socket, request)) return;
      const caller = callerOf(request);
      const found = checked.get(request);
      if (caller.kind !== 'user' || !found) return socket.close(1008, 'not allowed');
      void shells.run({ ws: socket, ...found, caller, ip: request.ip ?? '', cols: request.query.cols, rows: request.query.rows });
    },
  });
};
