// The remote desktop (issue 60): POST /agents/{id}/desktop opens a desktop tunnel to the device's VNC
// server, and the browser's noVNC speaks RFB over the tunnel's proxy WebSocket; GET and PUT
// /agents/{id}/remote-access show and change where the device serves VNC and its web interface.
// In cluster mode a request for an agent held by another instance is forwarded there (the tunnel must
// live where the agent's socket is), with its own credentials; the proxy WebSocket follows it there.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import type { AgentHub } from '../agent-hub/agent-hub.js';
import { agentParams } from '../agents/agents.schemas.js';
import type { AgentService } from '../agents/agents.service.js';
import { forwardHttp, streamHolder } from '../device-sessions/forward-to-holder.js';
import type { RemoteTunnels } from '../tunnels/remote-tunnels.js';
import type { RemoteAccess } from './remote-access.service.js';

const tags = ['remote access'];

const hostSchema = z.string().trim().min(1).max(253).regex(/^[A-Za-z0-9.:_-]+$/, 'must be a host name or an IP address');
const portSchema = z.number().int().min(1).max(65_535);

const targetsSchema = z
  .object({
    vnc_host: z.string().describe("Where the agent connects for VNC, as seen from the device (default 127.0.0.1: the VNC server listens on the device's loopback only)"),
    vnc_port: z.number().int().describe('default 5900'),
    rdp_port: z.number().int().describe('The RDP port on the device (Windows), reached at 127.0.0.1 of the device; default 3389'),
    web_port: z.number().int().nullable().describe("The device's own web interface on 127.0.0.1 of the device: the agent's own port, else the platform's from the settings (web_interface_port_freebsd, web_interface_port_linux); null: none (Windows)"),
  })
  .meta({ id: 'RemoteAccessTargets' });

const desktopSchema = z.object({
  tunnel_id: z.string(),
  agent_id: z.string(),
  websocket_path: z.string().describe('The tunnel\'s proxy WebSocket (GET /proxy/{tunnel_id}): RFB as binary messages, for noVNC; only this sign-in session\'s token may connect, once'),
  target_host: z.string(),
  target_port: z.number().int(),
  view_only: z.boolean().describe('Keyboard, mouse, clipboard and resize messages from the browser are dropped by the server'),
  idle_minutes: z.number().int().describe('The desktop closes after this long without keyboard or mouse input (setting remote_desktop_idle_minutes)'),
  created_at: z.string(),
});

export const desktopRoutes: FastifyPluginAsyncZod<{
  remote: RemoteAccess;
  agents: AgentService;
  /** The local hub: whether this instance holds the agent's socket. */
  hub: AgentHub;
  cluster?: RemoteTunnels;
}> = async (app, { remote, agents, hub, cluster }) => {
  app.post(
    '/agents/:id/desktop',
    {
      // Any signed-in user's role reaches the handler (read users may view when the setting allows); keys 403.
      config: { access: 'user', audit: 'desktop.open' },
      schema: {
        operationId: 'openRemoteDesktop',
        summary: "Open a remote desktop to the device's VNC server, for noVNC in this browser",
        description:
          "Opens a tunnel from the agent to the device's VNC server (GET /agents/{id}/remote-access: 127.0.0.1:5900 of the device by default, so the VNC server need not listen on the network) and answers with its proxy WebSocket, which carries RFB as binary messages (noVNC's RFB class speaks it as is; the VNC password is asked by the VNC client and never reaches this server but inside RFB). " +
          'Only the sign-in session that opened it may connect (another token of the same user, another user and every API key get 403), once; the tunnel has no reachable proxy port (allow_from is empty). ' +
          'It closes when its WebSocket closes (the browser tab closed), when none connected within 60 s, after remote_desktop_idle_minutes without keyboard or mouse input, on DELETE /agents/{id}/tunnel/{tunnel_id}, or when the agent disconnects. ' +
          'Who may: write and admin users within the agent\'s customers; read users only when the setting remote_desktop_read_view_only is on, and then always view-only. view_only: the server drops the browser\'s keyboard, mouse, clipboard and resize messages (the VNC server must use no security or VNC authentication: another security type ends a view-only session). ' +
          'Audited as device.desktop.start and device.desktop.end (duration, bytes, why it ended), and listed in GET /device-sessions. 409 AGENT_NOT_CONNECTED. In cluster mode, any instance: the one holding the agent opens it.',
        tags,
        params: agentParams,
        body: z.object({ view_only: z.boolean().default(false) }).strict().default({ view_only: false }),
        response: { 201: desktopSchema },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const agent = await agents.get(caller, request.params.id); // 404 outside the caller's scope, before anything else
      const holder = await streamHolder(hub, cluster, request, agent.id);
      if (holder) return forwardHttp(request, reply, holder, cluster!.instanceId, request.body);
      const { tunnel, viewOnly, idleMinutes } = await remote.openDesktop(caller, agent.id, { viewOnly: request.body.view_only, ip: request.ip });
      return reply.code(201).send({
        tunnel_id: tunnel.id,
        agent_id: tunnel.agentId,
        websocket_path: `/api/v1/proxy/${tunnel.id}`,
        target_host: tunnel.targetHost,
        target_port: tunnel.targetPort,
        view_only: viewOnly,
        idle_minutes: idleMinutes,
        created_at: tunnel.createdAt.toISOString(),
      });
    },
  );

  app.get(
    '/agents/:id/remote-access',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'getRemoteAccessTargets',
        summary: 'Where the device serves VNC, RDP and its own web interface',
        description: "The ports the remote desktop, RDP and web-interface launchers reach on the device (through the agent, on the device's loopback): the agent's own where set, else the defaults.",
        tags,
        params: agentParams,
        response: { 200: targetsSchema },
      },
    },
    async (request) => remote.targets(callerOf(request), request.params.id),
  );

  app.put(
    '/agents/:id/remote-access',
    {
      config: { access: 'write', audit: 'remote_access.update' },
      schema: {
        operationId: 'setRemoteAccessTargets',
        summary: 'Change where the device serves VNC, RDP or its own web interface',
        description: 'Only the fields given change; web_port null goes back to the platform\'s port from the settings.',
        tags,
        params: agentParams,
        body: z.object({ vnc_host: hostSchema.optional(), vnc_port: portSchema.optional(), rdp_port: portSchema.optional(), web_port: portSchema.nullable().optional() }).strict(),
        response: { 200: targetsSchema },
      },
    },
    async (request) => remote.setTargets(callerOf(request), request.params.id, request.body),
  );
};
