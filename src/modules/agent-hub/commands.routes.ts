// POST /agents/{id}/exec, /update-check, /update, /major-update, /reboot, /hypervisor/action: synchronous
// commands (contract §6) — sent through the hub, answered with the agent's data. 409 not connected, 504
// no answer in time, 502 the agent reported an error or disconnected while the request waited.
// GET /hub/status: the connected agents.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { AppError } from '../../platform/errors.js';
import { agentParams } from '../agents/agents.schemas.js';
import type { AgentService } from '../agents/agents.service.js';
import { scopeOf } from '../auth/caller.js';
import type { TunnelManager } from '../tunnels/tunnel-manager.js';
import type { AgentHub } from './agent-hub.js';
import type { CommandParams } from './agent-protocol.js';
import { REST_COMMANDS } from './commands.schemas.js';

const ERRORS = 'Not connected → 409 AGENT_NOT_CONNECTED; no answer in time → 504 AGENT_TIMEOUT; the agent answers with an error → 502 AGENT_ERROR (its text in `error`); it disconnects while the request waits → 502 AGENT_DISCONNECTED.';

const hubStatusSchema = z.object({
  agents: z.array(
    z.object({ agent_id: z.string(), connected_at: z.string(), last_seen: z.string(), remote_address: z.string(), pending_commands: z.number().int() }),
  ),
  tunnels: z.array(
    z.object({ tunnel_id: z.string(), agent_id: z.string(), proxy_port: z.number().int(), target_host: z.string(), target_port: z.number().int(), sessions: z.number().int() }),
  ),
  pending_commands: z.number().int(),
  dropped_frames: z.number().int().describe('Malformed frames from agents dropped since start'),
  unknown_responses: z.number().int().describe('Answers that matched no pending command (late, or for another socket)'),
});

export const commandRoutes: FastifyPluginAsyncZod<{ hub: AgentHub; agents: AgentService; tunnels: TunnelManager }> = async (app, { hub, agents, tunnels }) => {
  for (const spec of REST_COMMANDS) {
    app.post(
      spec.path,
      {
        config: { access: 'write', audit: spec.audit },
        schema: {
          summary: spec.summary,
          description: `${ERRORS} An agent outside the caller's scope is 404.`,
          tags: ['commands'],
          params: agentParams,
          body: spec.body,
          response: { 200: spec.answer ?? z.unknown().describe('The agent\'s answer, passed through') },
        },
      },
      async (request) => {
        const caller = callerOf(request);
        const agentId = request.params.id;
        // A connected agent exists (deleting one closes its socket), so an unscoped caller needs no
        // lookup; a scoped caller's access, and a disconnected agent's 404-or-409, need the row.
        if (scopeOf(caller) !== null || !hub.isConnected(agentId)) await agents.get(caller, agentId);
        const body = request.body as never;
        const data = await hub.request(agentId, spec.command, body as CommandParams<typeof spec.command>, spec.waitMs(body));
        if (!spec.answer) return data ?? {};
        const checked = spec.answer.safeParse(data);
        if (!checked.success) throw new AppError('AGENT_ERROR', `The agent's answer to ${spec.command} is malformed`);
        return checked.data;
      },
    );
  }

  app.get(
    '/hub/status',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Connected agents (with pending commands) and open tunnels of this server',
        description:
          "A key scoped to a customer sees only that customer's agents. Not a paged list: one object, a snapshot of this server's live sockets and tunnels held in memory (no stored order to resume from); use `GET /agents` for the fleet.",
        tags: ['commands'],
        response: { 200: hubStatusSchema },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const status = hub.status();
      const open = tunnels.list().map((t) => ({
        tunnel_id: t.id,
        agent_id: t.agentId,
        proxy_port: t.port,
        target_host: t.targetHost,
        target_port: t.targetPort,
        sessions: t.sessions.size,
      }));
      return { ...status, agents: await agents.filterToScope(caller, status.agents), tunnels: await agents.filterToScope(caller, open) };
    },
  );
};
