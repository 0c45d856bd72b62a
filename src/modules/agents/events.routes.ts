// Agent events (spec §3/§6): status changes from the monitor and WebSocket connects/disconnects.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { toTimestamp } from '../../http/common-schemas.js';
import { agentParams, eventSchema, eventsQuery } from './agents.schemas.js';
import type { AgentService } from './agents.service.js';

const tags = ['agents'];

export const eventRoutes: FastifyPluginAsyncZod<{ agents: AgentService }> = async (app, { agents }) => {
  const toDto = (e: { id: number; agent_id: string; type: z.infer<typeof eventSchema>['type']; created_at: Date }) => ({
    ...e,
    created_at: toTimestamp(e.created_at),
  });

  app.get(
    '/agents/events',
    {
      config: { access: 'read' },
      schema: { summary: 'Events of all agents, newest first', tags, querystring: eventsQuery, response: { 200: z.array(eventSchema) } },
    },
    async (request) => {
      return (await agents.events(callerOf(request), request.query)).map(toDto);
    },
  );

  app.get(
    '/agents/:id/events',
    {
      config: { access: 'read' },
      schema: { summary: 'Events of one agent, newest first', tags, params: agentParams, querystring: eventsQuery, response: { 200: z.array(eventSchema) } },
    },
    async (request) => {
      return (await agents.events(callerOf(request), { ...request.query, agentId: request.params.id })).map(toDto);
    },
  );
};
