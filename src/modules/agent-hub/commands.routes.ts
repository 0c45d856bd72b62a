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
import { originOf, sendExec, type CommandHistory } from '../history/command-history.js';
import type { AgentCommander } from './agent-commander.js';
import type { CommandParams } from './agent-protocol.js';
import { REST_COMMANDS } from './commands.schemas.js';
import { hubStatusSchema, type HubStatusView } from './hub-status.js';

const ERRORS = 'Not connected → 409 AGENT_NOT_CONNECTED; no answer in time → 504 AGENT_TIMEOUT; the agent answers with an error → 502 AGENT_ERROR (its text in `error`); it disconnects while the request waits → 502 AGENT_DISCONNECTED. Cluster mode: an agent held by another instance is reached over NATS with the same answers; while NATS is down → 503 CLUSTER_UNAVAILABLE with Retry-After.';

export interface CommandRouteDeps {
  /** The hub on one instance; the cluster's commander in cluster mode. */
  commander: AgentCommander;
  /** Every exec is kept in the command history. */
  history: CommandHistory;
  agents: AgentService;
  /** What GET /hub/status shows (this instance's, or the cluster's). */
  status(): Promise<HubStatusView>;
}

export const commandRoutes: FastifyPluginAsyncZod<CommandRouteDeps> = async (app, { commander, history, agents, status }) => {
  for (const spec of REST_COMMANDS) {
    app.post(
      spec.path,
      {
        config: { access: 'write', audit: spec.audit },
        schema: {
          summary: spec.summary,
          description:
            `${ERRORS} An agent outside the caller's scope is 404.` +
            (spec.command === 'exec' ? ' Kept in the command history (GET /agents/{id}/history), whose entry id the answer adds as `history_id`.' : ''),
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
        if (scopeOf(caller) !== null || !commander.isConnected(agentId)) await agents.get(caller, agentId);
        const body = request.body as never;
        if (spec.command === 'exec') {
          const { command, timeout } = body as { command: string; timeout: number };
          return history.run(originOf(caller, 'exec'), agentId, command, timeout, () => sendExec(commander, agentId, command, timeout));
        }
        const data = await commander.request(agentId, spec.command, body as CommandParams<typeof spec.command>, spec.waitMs(body));
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
        summary: 'Connected agents (with pending commands) and open tunnels of this server, or of every instance in cluster mode',
        description:
          "A key scoped to a customer sees only that customer's agents. Not a paged list: one object, a snapshot of this server's live sockets and tunnels held in memory (no stored order to resume from); use `GET /agents` for the fleet. In cluster mode every instance is asked over the bus: entries carry `instance_id`, and `instances` lists each live instance (an instance that does not answer within 2 s is listed as unreachable).",
        tags: ['commands'],
        response: { 200: hubStatusSchema },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const view = await status();
      return { ...view, agents: await agents.filterToScope(caller, view.agents), tunnels: await agents.filterToScope(caller, view.tunnels) };
    },
  );
};
