// Agent events (spec §3/§6): status changes from the monitor and WebSocket connects/disconnects.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { toTimestamp } from '../../http/common-schemas.js';
import { listDescription, listResponse, sendList } from '../../http/pagination.js';
import type { PageRequest } from '../../platform/paging.js';
import type { Caller } from '../auth/caller.js';
import { agentParams, EVENT_LIST, eventSchema, eventsQuery } from './agents.schemas.js';
import type { AgentService } from './agents.service.js';
import type { EventFilter } from './events.repo.js';

const tags = ['agents'];

export const eventRoutes: FastifyPluginAsyncZod<{ agents: AgentService }> = async (app, { agents }) => {
  const toDto = (e: { id: number; agent_id: string; type: z.infer<typeof eventSchema>['type']; created_at: Date }) => ({
    ...e,
    created_at: toTimestamp(e.created_at),
  });

  const source = (caller: Caller, filter: Omit<EventFilter, 'scope'>) => ({
    item: eventSchema,
    dto: toDto,
    fetch: (page: PageRequest) => agents.events(caller, filter, page),
  });

  app.get(
    '/agents/events',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Events of all agents, newest first',
        description: listDescription(EVENT_LIST),
        tags,
        querystring: eventsQuery,
        response: { 200: listResponse(eventSchema, EVENT_LIST) },
      },
    },
    async (request, reply) => sendList(request, reply, EVENT_LIST, source(callerOf(request), { type: request.query.type })),
  );

  app.get(
    '/agents/:id/events',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Events of one agent, newest first',
        description: listDescription(EVENT_LIST),
        tags,
        params: agentParams,
        querystring: eventsQuery,
        response: { 200: listResponse(eventSchema, EVENT_LIST) },
      },
    },
    async (request, reply) => sendList(request, reply, EVENT_LIST, source(callerOf(request), { type: request.query.type, agentId: request.params.id })),
  );
};
