// /scripts: the script library (issue 33, Build 3). Read by any reader; created, changed and deleted by
// unscoped write callers (the library serves every customer); run with POST /scripts/{id}/run on one
// agent in the caller's scope, answered as POST /agents/{id}/exec.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { idParams, okSchema, toTimestamp } from '../../http/common-schemas.js';
import { allByDefault, listDescription, listResponse, pageQuery, sendList } from '../../http/pagination.js';
import { execResultSchema } from '../agent-hub/agent-protocol.js';
import { agentIdSchema } from '../agents/agents.schemas.js';
import { scriptBody, scriptRunParams, scriptSchema } from './scripts.schemas.js';
import type { Script, ScriptService } from './scripts.service.js';

const tags = ['scripts'];
const SCRIPT_LIST = allByDefault('by name (ignoring case), then id');

const runBody = z.object({ agent_id: agentIdSchema, ...scriptRunParams }).strict();

const toDto = (s: Script) => ({ ...s, created_at: toTimestamp(s.created_at), updated_at: toTimestamp(s.updated_at) });

export const scriptRoutes: FastifyPluginAsyncZod<{ scripts: ScriptService }> = async (app, { scripts }) => {
  app.get(
    '/scripts',
    {
      config: { access: 'read' },
      schema: { summary: 'The script library', description: listDescription(SCRIPT_LIST), tags, querystring: z.object(pageQuery(SCRIPT_LIST)), response: { 200: listResponse(scriptSchema, SCRIPT_LIST) } },
    },
    async (request, reply) => sendList(request, reply, SCRIPT_LIST, { item: scriptSchema, dto: toDto, fetch: (page) => scripts.list(page) }),
  );

  app.get(
    '/scripts/:id',
    { config: { access: 'read' }, schema: { summary: 'One script', tags, params: idParams, response: { 200: scriptSchema } } },
    async (request) => toDto(await scripts.get(request.params.id)),
  );

  app.post(
    '/scripts',
    {
      config: { access: 'write', audit: 'script.create', serverWide: true },
      schema: {
        summary: 'Save a script',
        description: 'Unscoped callers only (403 for a customer-scoped key): the library serves every customer. A name taken (ignoring case) is 409.',
        tags,
        body: scriptBody,
        response: { 201: scriptSchema },
      },
    },
    async (request, reply) => reply.code(201).send(toDto(await scripts.create(callerOf(request), request.body))),
  );

  app.put(
    '/scripts/:id',
    {
      config: { access: 'write', audit: 'script.update', serverWide: true },
      schema: { summary: 'Replace a script', description: 'As POST /scripts; the history keeps the name each run had.', tags, params: idParams, body: scriptBody, response: { 200: scriptSchema } },
    },
    async (request) => toDto(await scripts.update(callerOf(request), request.params.id, request.body)),
  );

  app.delete(
    '/scripts/:id',
    {
      config: { access: 'write', audit: 'script.delete', serverWide: true },
      schema: { summary: 'Delete a script', description: 'Its history entries stay, with its name.', tags, params: idParams, response: { 200: okSchema } },
    },
    async (request) => {
      await scripts.delete(callerOf(request), request.params.id);
      return { ok: true as const };
    },
  );

  app.post(
    '/scripts/:id/run',
    {
      config: { access: 'write', audit: 'script.run' },
      schema: {
        summary: 'Run a script on one agent and wait for its answer',
        description:
          'Answered as POST /agents/{id}/exec (409 not connected, 504 no answer in time, 502 agent error), plus `history_id`. ' +
          "409 when the script does not apply to the agent's platform; 400 for an unknown parameter or when the script with its values " +
          'is longer than the agent runs (10,000 characters; PowerShell scripts are sent encoded, about 2.7 times their length). An agent outside the caller\'s scope is 404.',
        tags,
        params: idParams,
        body: runBody,
        response: { 200: execResultSchema.extend({ history_id: z.number().int().nullable() }) },
      },
    },
    async (request) => {
      const { agent_id: agentId, ...run } = request.body;
      return scripts.run(callerOf(request), request.params.id, agentId, run);
    },
  );
};
