// GET /agent/ws: the agent's command channel (contract §5). Everything is checked before the upgrade,
// so a refused agent gets a plain HTTP answer in the contract's error body: 401 bad key (auth hook),
// 403 read key or another customer's agent, 404 unknown agent, 400 bad agent_id.
import type {} from '@fastify/websocket'; // the route option `wsHandler` and its handler types
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { requireWebSocketUpgrade, WEBSOCKET_ONLY_NOTE } from '../../http/websocket-route.js';
import { AppError } from '../../platform/errors.js';
import { agentIdSchema } from '../agents/agents.schemas.js';
import type { AgentService } from '../agents/agents.service.js';
import type { AgentHub } from './agent-hub.js';
import { levelOf } from '../auth/access-policy.js';
import { DEFAULT_CONNECT_RATE, type ConnectRate } from './connect-rate.js';
import { MAX_MESSAGE_BYTES, TUNNEL_FLOW_CONTROL_DOC } from './agent-protocol.js';

/**
 * Lets go of what the upgrade request left attached to a socket that now lives for days: the HTTP
 * response @fastify/websocket made for the routing (the raw socket points at it, and through it at
 * Fastify's request and reply with their headers, logger and read buffer) and the plugin's error listener
 * (which holds them too; the hub adds its own). Together about 3.4 KiB per connected agent.
 */
function releaseUpgrade(upgrade: ServerResponse | undefined, rawSocket: Socket, ws: { removeAllListeners(event: 'error'): unknown }): void {
  upgrade?.detachSocket(rawSocket);
  ws.removeAllListeners('error');
}

/** A copy of the id that does not share the memory of the upgrade URL it was sliced from. */
const ownCopy = (id: string) => Buffer.from(id, 'latin1').toString('latin1');

export const agentSocketRoutes: FastifyPluginAsyncZod<{ hub: AgentHub; agents: AgentService; connectRate: ConnectRate }> = async (
  app,
  { hub, agents, connectRate },
) => {
  // The upgrade's response is known to the preHandler only; the socket handler releases it.
  const upgrades = new WeakMap<IncomingMessage, ServerResponse>();
  app.route({
    method: 'GET',
    url: '/agent/ws',
    config: { access: 'agent' },
    schema: {
      summary: 'WebSocket for an agent: commands from the server, answers and tunnel bytes from the agent',
      description:
        `Authenticate with \`X-API-Key\` (or \`api_key\`); agent, write and admin keys and signed-in users may connect, read keys may not (403), and a key scoped to a customer only as that customer's agents (403). Unknown agent → 404. A second socket for the same agent replaces the first (close code 4000); deleting the agent closes it (4004). ` +
        `One agent may connect ${DEFAULT_CONNECT_RATE.burst} times in a row, then once every ${DEFAULT_CONNECT_RATE.refillMs / 1000} s (per agent and credential); more often answers 429 RATE_LIMITED with \`Retry-After\` (seconds) before the upgrade. ` +
        `The server pings every 30 s and drops a socket silent for 90 s. Messages over ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB close it with 1009. Frames: see contract §5. ` +
        TUNNEL_FLOW_CONTROL_DOC +
        WEBSOCKET_ONLY_NOTE,
      tags: ['agent protocol'],
      querystring: z.object({ agent_id: agentIdSchema, api_key: z.string().optional() }),
    },
    preHandler: async (request, reply) => {
      const caller = callerOf(request);
      if (levelOf(caller) === 'read') {
        throw new AppError('FORBIDDEN', `A read ${caller.kind === 'user' ? 'user' : 'key'} cannot connect as an agent`);
      }
      // Before the database is asked anything: a reconnect loop costs a cached key check and this.
      const waitS = connectRate.take(caller.kind === 'api_key' ? `key:${caller.keyId}` : `user:${caller.userId}`, request.query.agent_id);
      if (waitS > 0) {
        throw new AppError('RATE_LIMITED', `This agent reconnects too often; try again in ${waitS} s`, { headers: { 'retry-after': String(waitS) } });
      }
      await agents.assertMayConnect(caller, request.query.agent_id);
      upgrades.set(request.raw, reply.raw);
    },
    handler: requireWebSocketUpgrade,
    wsHandler: (socket, request) => {
      releaseUpgrade(upgrades.get(request.raw), request.raw.socket, socket);
      upgrades.delete(request.raw);
      hub.attach(ownCopy(request.query.agent_id), socket, ownCopy(request.ip));
    },
  });
};
