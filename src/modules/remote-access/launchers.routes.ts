// The RDP and web-interface launchers (issue 60): a tunnel to the Windows device's RDP port, with a ready
// .rdp file for the technician's own client, and a tunnel to a firewall's or hypervisor's own web
// interface, to open in a new browser tab. Both let in only the opener's own address (or allow_from)
// and close at the setting remote_launch_minutes. In cluster mode the instance holding the agent opens
// them, and proxy_host is its advertised address.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { AppError } from '../../platform/errors.js';
import type { AgentHub } from '../agent-hub/agent-hub.js';
import { agentIdSchema, agentParams } from '../agents/agents.schemas.js';
import type { AgentService } from '../agents/agents.service.js';
import { forwardHttp, streamHolder, wasForwarded } from '../device-sessions/forward-to-holder.js';
import { MAX_ALLOW_FROM, parseAllowEntry } from '../tunnels/allow-list.js';
import type { RemoteTunnels } from '../tunnels/remote-tunnels.js';
import { proxyHostOf, tunnelDto, tunnelSchema } from '../tunnels/tunnel-dto.js';
import type { Tunnel, TunnelManager } from '../tunnels/tunnel-manager.js';
import { tunnelIdSchema } from '../tunnels/tunnel-proxy.ws.js';
import { rdpFile, rdpFileName } from './rdp-file.js';
import type { RemoteAccess } from './remote-access.service.js';

const tags = ['remote access'];

const allowFrom = z
  .array(z.string().max(64).refine((entry) => parseAllowEntry(entry) !== null, 'must be an IPv4 or IPv6 address, or a network in CIDR notation'))
  .min(1)
  .max(MAX_ALLOW_FROM)
  .optional()
  .describe('Who may connect to the proxy port; default: the address this request came from (behind a reverse proxy, only with TRUST_PROXY set)');

const LIMIT_NOTE = 'Closes at expires_at (setting remote_launch_minutes), in use or not, or on DELETE /agents/{id}/tunnel/{tunnel_id}; audited as a device session (device.<kind>.start and .end with duration and bytes). ';
const CLUSTER_NOTE = 'In cluster mode, any instance: the one holding the agent opens it, and proxy_host is its ADVERTISE_ADDRESS. 409 AGENT_NOT_CONNECTED.';

export const launcherRoutes: FastifyPluginAsyncZod<{
  remote: RemoteAccess;
  agents: AgentService;
  tunnels: TunnelManager;
  /** The local hub: whether this instance holds the agent's socket. */
  hub: AgentHub;
  cluster?: RemoteTunnels;
  advertiseAddress?: string;
}> = async (app, { remote, agents, tunnels, hub, cluster, advertiseAddress }) => {
  const hostOf = (t: Tunnel, requestHost: string) => proxyHostOf(t, cluster ? advertiseAddress : undefined, requestHost);
  /** The tunnel's own instance opens it; a forwarded request carries the client's address as allow_from. */
  const forwarded = async (request: Parameters<typeof streamHolder>[2], agentId: string, reply: Parameters<typeof forwardHttp>[1], body: { allow_from?: string[] }) => {
    const holder = await streamHolder(hub, cluster, request, agentId);
    if (!holder) return false;
    await forwardHttp(request, reply, holder, cluster!.instanceId, { ...body, allow_from: body.allow_from ?? [request.ip] });
    return true;
  };
  const allowed = (entries: string[] | undefined, ip: string) => (entries ?? [ip]).flatMap((entry) => parseAllowEntry(entry) ?? []);

  app.post(
    '/agents/:id/rdp',
    {
      config: { access: 'write', audit: 'rdp.open' },
      schema: {
        operationId: 'openRdpTunnel',
        summary: "Open a tunnel to the Windows device's RDP port, with a .rdp file for the technician's client",
        description:
          "Opens a tunnel from the agent to 127.0.0.1:<rdp_port> of the device (GET /agents/{id}/remote-access; default 3389) whose proxy port lets in only allow_from (default: the caller's own address), and answers with it and the path of a ready .rdp file naming proxy_host:proxy_port. Windows agents only (else 409 AGENT_UNSUPPORTED). " +
          LIMIT_NOTE +
          CLUSTER_NOTE,
        tags,
        params: agentParams,
        body: z.object({ allow_from: allowFrom }).strict().default({}),
        response: { 201: z.object({ tunnel: tunnelSchema, rdp_file_path: z.string(), expires_at: z.string() }) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const agent = await agents.get(caller, request.params.id);
      if (await forwarded(request, agent.id, reply, request.body)) return;
      const tunnel = await remote.openRdp(caller, agent.id, allowed(request.body.allow_from, request.ip), request.ip);
      return reply.code(201).send({
        tunnel: tunnelDto(tunnel, hostOf(tunnel, request.hostname)),
        rdp_file_path: `/api/v1/agents/${agent.id}/rdp/${tunnel.id}/file`,
        expires_at: tunnel.expiresAt!.toISOString(),
      });
    },
  );

  app.get(
    '/agents/:id/rdp/:tid/file',
    {
      config: { access: 'write' },
      schema: {
        operationId: 'getRdpFile',
        summary: 'The .rdp file of an RDP tunnel (only for whoever opened it)',
        description: 'A Remote Desktop Connection file (application/x-rdp) pointing at the tunnel\'s proxy_host:proxy_port; it holds no credentials. 403 for anyone but the opener; 404 for an unknown or closed tunnel.',
        tags,
        params: z.object({ id: agentIdSchema, tid: tunnelIdSchema }),
        produces: ['application/x-rdp'],
        response: { 200: z.string() },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const agent = await agents.get(caller, request.params.id);
      const tunnel = tunnels.get(agent.id, request.params.tid);
      if (!tunnel) {
        const holder = cluster && !wasForwarded(request) ? await cluster.locate(request.params.tid) : undefined;
        if (holder) return forwardHttp(request, reply, holder, cluster!.instanceId);
        throw new AppError('NOT_FOUND', 'Tunnel not found');
      }
      if (tunnel.purpose !== 'rdp') throw new AppError('NOT_FOUND', 'Tunnel not found');
      if (!tunnels.isOpenedBy(tunnel, caller)) throw new AppError('FORBIDDEN', 'Only the user or API key that opened this tunnel may fetch its file');
      return reply
        .type('application/x-rdp')
        .header('content-disposition', `attachment; filename="${rdpFileName(agent.name)}"`)
        .send(rdpFile(hostOf(tunnel, request.hostname), tunnel.port));
    },
  );

  app.post(
    '/agents/:id/web-interface',
    {
      config: { access: 'write', audit: 'web_interface.open' },
      schema: {
        operationId: 'openWebInterfaceTunnel',
        summary: "Open a tunnel to the device's own web interface (OPNsense, Proxmox VE), for a new browser tab",
        description:
          "Opens a tunnel from the agent to 127.0.0.1:<port> of the device (port, else the agent's web_port, else the platform's setting: 443 for firewalls, 8006 for hypervisors; none for Windows: 400 without port) whose proxy port lets in only allow_from (default: the caller's own address), and answers with url, https://proxy_host:proxy_port/. The browser will warn about the device's own certificate: it is issued for the device's name, not for this address. " +
          LIMIT_NOTE +
          CLUSTER_NOTE,
        tags,
        params: agentParams,
        body: z.object({ port: z.number().int().min(1).max(65_535).optional(), allow_from: allowFrom }).strict().default({}),
        response: { 201: z.object({ tunnel: tunnelSchema, url: z.string(), expires_at: z.string() }) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const agent = await agents.get(caller, request.params.id);
      if (await forwarded(request, agent.id, reply, request.body)) return;
      const tunnel = await remote.openWeb(caller, agent.id, request.body.port, allowed(request.body.allow_from, request.ip), request.ip);
      const host = hostOf(tunnel, request.hostname);
      return reply.code(201).send({
        tunnel: tunnelDto(tunnel, host),
        url: `https://${host.includes(':') ? `[${host}]` : host}:${tunnel.port}/`,
        expires_at: tunnel.expiresAt!.toISOString(),
      });
    },
  );
};
