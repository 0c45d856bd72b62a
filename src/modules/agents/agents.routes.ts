// /agents and /customers/{id}/agents: operator reads and changes. GET /agents/{id} is also what the
// on-device updater polls, so agent keys may call it.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { idParams, okSchema } from '../../http/common-schemas.js';
import { listDescription, listResponse, sendList } from '../../http/pagination.js';
import { sendRawJson } from '../../http/raw-json.js';
import {
  AGENT_LIST,
  agentJsonWithSystem,
  agentOrderQuery,
  agentParams,
  agentSchema,
  agentWithSystemSchema,
  annotateBody,
  customerAgentSchema,
  customerIdBody,
  listAgentsQuery,
  preRegisterBody,
  tagCountSchema,
  toAgentDto,
} from './agents.schemas.js';
import type { Agent, AgentService } from './agents.service.js';

const tags = ['agents'];

export const agentRoutes: FastifyPluginAsyncZod<{ agents: AgentService }> = async (app, { agents }) => {
  /** The agent object; `version_outdated` needs the newest firmware per platform, read once per request. */
  const dtoMaker = async () => {
    const latest = await agents.latestVersions();
    return (a: Agent) => toAgentDto(a, agents.now(), agents.connections.isConnected(a.id), latest);
  };
  const dto = async (a: Agent) => (await dtoMaker())(a);

  app.post(
    '/agents',
    {
      config: { access: 'write', audit: 'agent.pre_register' },
      schema: {
        summary: 'Pre-register an agent (hostname "(ausstehend)" until it registers)',
        description: 'Registration adopts it by name. A second pre-registered agent of the same name → 409.',
        tags,
        body: preRegisterBody,
        response: { 201: agentSchema },
      },
    },
    async (request, reply) => reply.code(201).send(await dto(await agents.preRegister(callerOf(request), request.body))),
  );

  app.get(
    '/agents',
    {
      config: { access: 'read' },
      schema: {
        summary: 'List agents with their computed status',
        description: listDescription(AGENT_LIST, 'Filters: `customer_id`, `status` (computed when each page is read), `platform`, `q`, `tag`.'),
        tags,
        querystring: listAgentsQuery,
        response: { 200: listResponse(agentSchema, AGENT_LIST) },
      },
    },
    async (request, reply) => {
      const { customer_id, status, platform, q, tag, sort, order } = request.query;
      const caller = callerOf(request);
      const filter = { customerId: customer_id, status, platform, q, tag };
      return sendList(request, reply, AGENT_LIST, {
        item: agentSchema,
        dto: await dtoMaker(),
        fetch: (page) => agents.list(caller, filter, { sort, descending: order === 'desc' }, page),
      });
    },
  );

  app.get(
    '/agents/tags',
    {
      config: { access: 'read' },
      schema: {
        summary: 'The tags in use, each with how many agents carry it',
        description: 'Not paged: one entry per distinct tag. Tags that differ only in case are one tag (shown in one of its spellings). Ordered by tag in natural order. A customer-scoped key sees its agents\' tags only.',
        tags,
        response: { 200: z.array(tagCountSchema) },
      },
    },
    async (request) => agents.tags(callerOf(request)),
  );

  app.patch(
    '/agents/:id',
    {
      config: { access: 'write', audit: 'agent.annotate' },
      schema: {
        summary: "Set an agent's tags and/or note",
        description:
          'Technicians\' labels: `tags` replaces the whole list (at most 20, 1 to 40 characters each after trimming, unique ignoring case), `note` the free text ' +
          '(at most 2000 characters). Absent fields stay as they are; an empty body is 400. Answers the agent object.',
        tags,
        params: agentParams,
        body: annotateBody,
        response: { 200: agentSchema },
      },
    },
    async (request) => dto(await agents.annotate(callerOf(request), request.params.id, request.body)),
  );

  app.get(
    '/agents/:id',
    {
      config: { access: 'agent' },
      schema: { summary: 'One agent with its latest system data, byte for byte', tags, params: agentParams, response: { 200: agentWithSystemSchema } },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const agent = await agents.get(caller, request.params.id);
      const system = await agents.systemText(caller, agent.id);
      return sendRawJson(reply, agentJsonWithSystem(await dto(agent), system));
    },
  );

  app.get(
    '/agents/:id/system',
    {
      config: { access: 'read' },
      schema: {
        summary: 'The latest heartbeat body exactly as the agent sent it (null before the first)',
        tags,
        params: agentParams,
        response: { 200: { description: 'The heartbeat body as sent (any JSON object), or null', content: { 'application/json': { schema: z.unknown() } } } },
      },
    },
    async (request, reply) => {
      const system = await agents.systemText(callerOf(request), request.params.id);
      return sendRawJson(reply, system ?? 'null');
    },
  );

  app.delete(
    '/agents/:id',
    {
      config: { access: 'write', audit: 'agent.delete' },
      schema: { summary: 'Delete an agent and everything it owns (events, metrics, backups, tunnels)', tags, params: agentParams, response: { 200: okSchema } },
    },
    async (request) => {
      await agents.delete(callerOf(request), request.params.id);
      return { ok: true as const };
    },
  );

  app.put(
    '/agents/:id/customer',
    {
      config: { access: 'write', audit: 'agent.assign_customer' },
      schema: { summary: 'Assign the agent to a customer', tags, params: agentParams, body: customerIdBody, response: { 200: agentSchema } },
    },
    async (request) => dto(await agents.setCustomer(callerOf(request), request.params.id, request.body.customer_id)),
  );

  app.delete(
    '/agents/:id/customer',
    {
      config: { access: 'write', audit: 'agent.unassign_customer' },
      schema: { summary: 'Remove the agent from its customer', tags, params: agentParams, response: { 200: agentSchema } },
    },
    async (request) => dto(await agents.setCustomer(callerOf(request), request.params.id, null)),
  );

  app.get(
    '/customers/:id/agents',
    {
      config: { access: 'read' },
      schema: {
        summary: "The customer's agents, with the hint of the key each last used",
        description: listDescription(AGENT_LIST),
        tags: ['customers'],
        params: idParams,
        querystring: z.object(agentOrderQuery),
        response: { 200: listResponse(customerAgentSchema, AGENT_LIST) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const order = { sort: request.query.sort, descending: request.query.order === 'desc' };
      const toDto = await dtoMaker();
      return sendList(request, reply, AGENT_LIST, {
        item: customerAgentSchema,
        dto: (a: Agent) => ({ ...toDto(a), last_api_key: a.last_api_key }),
        fetch: (page) => agents.listOfCustomer(caller, request.params.id, order, page),
      });
    },
  );
};
