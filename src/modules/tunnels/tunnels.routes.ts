// POST /agents/{id}/tunnel, GET /agents/{id}/tunnels, DELETE /agents/{id}/tunnel/{tid} (contract §8).
// In cluster mode the tunnel lives on the instance holding the agent's socket: opening, listing and
// closing through any other instance are asked of that one (remote-tunnels.ts).
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { AppError } from '../../platform/errors.js';
import { agentIdSchema, agentParams } from '../agents/agents.schemas.js';
import type { AgentService } from '../agents/agents.service.js';
import { AllowList, MAX_ALLOW_FROM, parseAllowEntry } from './allow-list.js';
import type { RemoteTunnels } from './remote-tunnels.js';
import { proxyHostOf, tunnelDto, tunnelSchema, tunnelWithTrafficDto, tunnelWithTrafficSchema } from './tunnel-dto.js';
import type { Tunnel, TunnelManager } from './tunnel-manager.js';
import { tunnelIdSchema } from './tunnel-proxy.ws.js';

const tags = ['tunnels'];

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

export const tunnelRoutes: FastifyPluginAsyncZod<{
  tunnels: TunnelManager;
  agents: AgentService;
  /** Cluster mode: the other instances, and where clients reach this one's tunnel ports (ADVERTISE_ADDRESS). */
  remote?: RemoteTunnels;
  advertiseAddress?: string;
}> = async (app, { tunnels, agents, remote, advertiseAddress }) => {
  const advertised = remote ? advertiseAddress : undefined;
  const hostFor = (t: Tunnel, request: FastifyRequest) => proxyHostOf(t, advertised, request.hostname);

  app.post(
    '/agents/:id/tunnel',
    {
      config: { access: 'write', audit: 'tunnel.open' },
      schema: {
        summary: 'Open a TCP tunnel to a target reachable from the agent',
        description:
          'Listens on a free port of TUNNEL_PORT_MIN..TUNNEL_PORT_MAX at TUNNEL_BIND_ADDRESS; every connection there from an address in allow_from is one session through the agent, and a connection from any other address is reset (TCP RST) before it reaches the agent, counted in refused_connections and logged. ' +
          'A connection from the server itself (loopback or one of its addresses) must also come from the account the server runs as, or one in TUNNEL_LOCAL_UIDS (on Linux the owner of the connecting socket is read from /proc/net/tcp; elsewhere local connections are refused unless TUNNEL_LOCAL_UIDS=any): another local account is reset the same way. ' +
          'The tunnel belongs to its opener: only the same user or API key may use its proxy WebSocket (proxy_path), which needs no open port at all. Not connected → 409; no free port → 503 NO_FREE_PORT. The tunnel closes on DELETE (by anyone who may write to the agent), when the agent disconnects or is deleted, and after 30 minutes without sessions. ' +
          'Connect to proxy_host:proxy_port. In cluster mode the port opens on the instance holding the agent\'s connection, whichever instance this request reached (asked over NATS; only the request goes there, never tunnel bytes), and proxy_host is that instance\'s ADVERTISE_ADDRESS; NATS down → 503 CLUSTER_UNAVAILABLE.',
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
      const { target_host: targetHost, target_port: targetPort } = request.body;
      const elsewhere = await remote?.open(agent.id, { targetHost, targetPort, allowFrom, openedBy: caller });
      if (elsewhere) return reply.code(201).send(elsewhere);
      const tunnel = await tunnels.open(agent.id, targetHost, targetPort, { allowFrom: new AllowList(allowFrom), openedBy: caller });
      return reply.code(201).send(tunnelDto(tunnel, hostFor(tunnel, request)));
    },
  );

  app.get(
    '/agents/:id/tunnels',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Open tunnels of the agent, with sessions and bytes',
        description:
          'Not paged: the agent\'s open tunnels are held in memory, bounded by the proxy port range (TUNNEL_PORT_MIN..MAX). In cluster mode, from any instance: the instance holding the agent\'s connection is asked for its tunnels.',
        tags,
        params: agentParams,
        response: { 200: z.array(tunnelWithTrafficSchema) },
      },
    },
    async (request) => {
      const agent = await agents.get(callerOf(request), request.params.id);
      const here = tunnels.list(agent.id).map((t) => tunnelWithTrafficDto(tunnels, t, hostFor(t, request)));
      return remote ? [...here, ...(await remote.list(agent.id))] : here;
    },
  );

  app.delete(
    '/agents/:id/tunnel/:tid',
    {
      config: { access: 'write', audit: 'tunnel.close' },
      schema: {
        summary: 'Close a tunnel and all its sessions',
        description: 'In cluster mode through any instance: the instance that has the tunnel is asked to close it (over NATS); no instance has it → 404, NATS down → 503 CLUSTER_UNAVAILABLE.',
        tags,
        params: z.object({ id: agentIdSchema, tid: tunnelIdSchema }),
        response: { 200: z.object({ closed: z.literal(true) }) },
      },
    },
    async (request) => {
      const agent = await agents.get(callerOf(request), request.params.id);
      const closed = (await tunnels.close(agent.id, request.params.tid)) || (await remote?.close(agent.id, request.params.tid));
      if (!closed) throw new AppError('NOT_FOUND', 'Tunnel not found');
      return { closed: true as const };
    },
  );
};
