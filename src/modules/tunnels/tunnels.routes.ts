// POST /agents/{id}/tunnel, GET /agents/{id}/tunnels, DELETE /agents/{id}/tunnel/{tid} (contract §8).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { AppError } from '../../platform/errors.js';
import { agentIdSchema, agentParams } from '../agents/agents.schemas.js';
import type { AgentService } from '../agents/agents.service.js';
import { AllowList, MAX_ALLOW_FROM, parseAllowEntry } from './allow-list.js';
import type { Tunnel, TunnelManager } from './tunnel-manager.js';
import { tunnelIdSchema } from './tunnel-proxy.ws.js';

const tags = ['tunnels'];

const tunnelSchema = z.object({
  tunnel_id: z.string(),
  agent_id: z.string(),
  proxy_port: z.number().int(),
  bind_address: z.string(),
  target_host: z.string(),
  target_port: z.number().int(),
  created_at: z.string(),
  proxy_path: z.string().describe('WebSocket path carrying one session per connection, for clients that cannot reach proxy_port (see GET /proxy/{tunnel_id}); only the opener (opened_by) may use it'),
  allow_from: z.array(z.string()).describe('Client addresses and networks proxy_port lets in; connections from anywhere else are reset before they reach the agent'),
  opened_by: z
    .object({ type: z.enum(['user', 'api_key']), name: z.string(), key_hint: z.string().nullable() })
    .describe('Who opened the tunnel: a username, or an API key\'s name and hint (never the key)'),
  refused_connections: z.number().int().describe('Connections to proxy_port reset because their address was not in allow_from'),
});
const tunnelWithTrafficSchema = tunnelSchema.extend({
  sessions: z.number().int(),
  paused_sessions: z.number().int().describe('Sessions whose agent was asked (tunnel_pause) to stop reading the target until a slow client catches up'),
  bytes_in: z.number().int().describe('Client → target bytes'),
  bytes_out: z
    .number()
    .int()
    .describe(
      'Target → client bytes the clients took: written to the operating system for the client (TCP) or onto its WebSocket; bytes still waiting in the server are not counted. For a session the server reset, only what the client acknowledged (on Linux; elsewhere what the operating system took).',
    ),
  buffered_bytes: z
    .number()
    .int()
    .describe('Bytes the server holds right now for clients slower than their target; per session at most 8 MiB when the agent cannot pause sessions, 32 MiB otherwise'),
});

const allowEntry = z
  .string()
  .max(64)
  .refine((entry) => parseAllowEntry(entry) !== null, 'must be an IPv4 or IPv6 address, or a network in CIDR notation (10.0.0.0/8)');

const openBody = z.object({
  target_host: z.string().trim().min(1).max(253).regex(/^[A-Za-z0-9.:_-]+$/, 'must be a host name or an IP address'),
  target_port: z.number().int().min(1).max(65_535),
  allow_from: z
    .array(allowEntry)
    .min(1)
    .max(MAX_ALLOW_FROM)
    .optional()
    .describe(
      `Client addresses or networks (1 to ${MAX_ALLOW_FROM}) that may connect to proxy_port; default: the address this request came from (behind a reverse proxy, only with TRUST_PROXY set). IPv4-mapped IPv6 forms count as IPv4.`,
    ),
});

export const tunnelRoutes: FastifyPluginAsyncZod<{ tunnels: TunnelManager; agents: AgentService }> = async (app, { tunnels, agents }) => {
  const dto = (t: Tunnel) => ({
    tunnel_id: t.id,
    agent_id: t.agentId,
    proxy_port: t.port,
    bind_address: t.bindAddress,
    target_host: t.targetHost,
    target_port: t.targetPort,
    created_at: t.createdAt.toISOString(),
    proxy_path: `/api/v1/proxy/${t.id}`,
    allow_from: [...t.allowFrom.entries],
    opened_by: t.openedBy,
    refused_connections: t.refused,
  });

  app.post(
    '/agents/:id/tunnel',
    {
      config: { access: 'write', audit: 'tunnel.open' },
      schema: {
        summary: 'Open a TCP tunnel to a target reachable from the agent',
        description:
          'Listens on a free port of TUNNEL_PORT_MIN..TUNNEL_PORT_MAX at TUNNEL_BIND_ADDRESS; every connection there from an address in allow_from is one session through the agent, and a connection from any other address is reset (TCP RST) before it reaches the agent, counted in refused_connections and logged. ' +
          'The tunnel belongs to its opener: only the same user or API key may use its proxy WebSocket (proxy_path), which needs no open port at all. Not connected → 409; no free port → 503 NO_FREE_PORT. The tunnel closes on DELETE (by anyone who may write to the agent), when the agent disconnects or is deleted, and after 30 minutes without sessions.',
        tags,
        params: agentParams,
        body: openBody,
        response: { 201: tunnelSchema },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const agent = await agents.get(caller, request.params.id);
      // request.ip honours TRUST_PROXY: without it, behind a reverse proxy this is the proxy's address.
      // An address that does not parse (never seen) leaves the list empty: the port then lets nobody in.
      const allowFrom = (request.body.allow_from ?? [request.ip]).flatMap((entry) => parseAllowEntry(entry) ?? []);
      const tunnel = await tunnels.open(agent.id, request.body.target_host, request.body.target_port, { allowFrom: new AllowList(allowFrom), openedBy: caller });
      return reply.code(201).send(dto(tunnel));
    },
  );

  app.get(
    '/agents/:id/tunnels',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Open tunnels of the agent, with sessions and bytes',
        description: 'Not paged: the agent\'s open tunnels are held in memory, bounded by the proxy port range (TUNNEL_PORT_MIN..MAX).',
        tags,
        params: agentParams,
        response: { 200: z.array(tunnelWithTrafficSchema) },
      },
    },
    async (request) => {
      const agent = await agents.get(callerOf(request), request.params.id);
      return tunnels.list(agent.id).map((t) => {
        const { bytesIn, bytesOut, buffered, held } = tunnels.bytes(t);
        return { ...dto(t), sessions: t.sessions.size, paused_sessions: held, bytes_in: bytesIn, bytes_out: bytesOut, buffered_bytes: buffered };
      });
    },
  );

  app.delete(
    '/agents/:id/tunnel/:tid',
    {
      config: { access: 'write', audit: 'tunnel.close' },
      schema: {
        summary: 'Close a tunnel and all its sessions',
        tags,
        params: z.object({ id: agentIdSchema, tid: tunnelIdSchema }),
        response: { 200: z.object({ closed: z.literal(true) }) },
      },
    },
    async (request) => {
      const agent = await agents.get(callerOf(request), request.params.id);
      if (!(await tunnels.close(agent.id, request.params.tid))) throw new AppError('NOT_FOUND', 'Tunnel not found');
      return { closed: true as const };
    },
  );
};
