// POST|DELETE /agents/{id}/request-update and POST /agents/request-update-all (contract §9). Agents'
// keys may clear the flag (the on-device updater does after a successful update), not set it.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { agentParams, platformSchema } from '../agents/agents.schemas.js';
import type { UpdateFlags } from './update-flag.js';

const tags = ['firmware'];
const flagSchema = z.object({ update_requested: z.boolean() });

export const updateFlagRoutes: FastifyPluginAsyncZod<{ flags: UpdateFlags }> = async (app, { flags }) => {
  app.post(
    '/agents/:id/request-update',
    {
      config: { access: 'write', audit: 'agent.update_request' },
      schema: {
        summary: 'Request a firmware update for the agent',
        description: "Sets the flag; the agent's next heartbeat answer carries update_available and update when firmware for its platform differs from what it runs.",
        tags,
        params: agentParams,
        response: { 200: flagSchema },
      },
    },
    async (request) => flags.set(callerOf(request), request.params.id, true),
  );

  app.delete(
    '/agents/:id/request-update',
    {
      config: { access: 'agent', audit: 'agent.update_request.clear' },
      schema: { summary: 'Clear the update request (agents\' keys may: the updater does after updating)', tags, params: agentParams, response: { 200: flagSchema } },
    },
    async (request) => flags.set(callerOf(request), request.params.id, false),
  );

  app.post(
    '/agents/request-update-all',
    {
      config: { access: 'write', audit: 'agent.update_request_all' },
      schema: {
        summary: 'Request a firmware update for every agent the caller can see',
        description:
          'A customer-scoped key flags its customer\'s agents only; `platform` limits it to one platform (the console\'s filter). ' +
          '`updated` is how many agents are now flagged.',
        tags,
        querystring: z.object({ platform: platformSchema.optional().describe('Only agents of this platform') }),
        response: { 200: z.object({ updated: z.number().int() }) },
      },
    },
    async (request) => flags.setAll(callerOf(request), request.query.platform),
  );
};
