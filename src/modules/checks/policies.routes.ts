// /check-policies (issue 61): named sets of checks and who they apply to. HTTP only; the rules live in
// checks.service.ts and the params of each kind in check-protocol.ts.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { idParams, okSchema, toTimestamp } from '../../http/common-schemas.js';
import { listDescription, listResponse, pageQuery, sendList } from '../../http/pagination.js';
import { CHECK_KINDS, MAX_CHECKS_PER_POLICY } from './check-protocol.js';
import type { CheckService } from './checks.service.js';
import type { StoredPolicy } from './policies.repo.js';
import { POLICY_LIST, policyBody, policySchema, type PolicyDto } from './policies.schemas.js';

const tags = ['checks'];

const RULES =
  'Server-wide: unscoped callers only (403 for a customer-scoped key or user; they see their agents\' checks at /agents/{id}/checks). ' +
  'A policy applies to an agent when every non-empty list matches: customer_ids (its customer), tags (any of its tags, ignoring case), platforms; ' +
  'a policy with all three empty applies to no agent. ' +
  `At most ${MAX_CHECKS_PER_POLICY} checks (more: 400). Each check: name, kind (${CHECK_KINDS.join(', ')}), params checked against the kind ` +
  '(see docs/checks.md; a bad field is 400 naming checks.<n>.params.<field>, and stored with its defaults), interval_seconds 10–86400 (300), ' +
  'timeout_seconds 1–300 (30, at most the interval), enabled (true). A script check takes exactly one of command (an executable on the device, ' +
  'with args) and script_id (a script of the library, sent to the agent with the set). Checks that carry the id of one of this policy\'s checks ' +
  'keep it (with its states, history, overrides and perfdata); others get a new id. Agents connected get their new sets at once.';

export function toPolicyDto(p: StoredPolicy): PolicyDto {
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    enabled: p.enabled,
    customer_ids: p.customer_ids,
    tags: p.tags,
    platforms: p.platforms as PolicyDto['platforms'],
    checks: p.checks.map((c) => ({ id: c.id, name: c.name, kind: c.kind as PolicyDto['checks'][number]['kind'], params: c.params, interval_seconds: c.interval_seconds, timeout_seconds: c.timeout_seconds, enabled: c.enabled })),
    agent_count: p.agent_count,
    created_at: toTimestamp(p.created_at),
    updated_at: toTimestamp(p.updated_at),
  };
}

export const policyRoutes: FastifyPluginAsyncZod<{ checks: CheckService }> = async (app, { checks }) => {
  app.get(
    '/check-policies',
    {
      config: { access: 'read', serverWide: true },
      schema: { operationId: 'listCheckPolicies', summary: 'Check policies', description: listDescription(POLICY_LIST, RULES), tags, querystring: z.object(pageQuery(POLICY_LIST)), response: { 200: listResponse(policySchema, POLICY_LIST) } },
    },
    async (request, reply) => sendList(request, reply, POLICY_LIST, { item: policySchema, dto: toPolicyDto, fetch: (page) => checks.list(callerOf(request), page) }),
  );

  app.post(
    '/check-policies',
    {
      config: { access: 'write', audit: 'check_policy.create', serverWide: true },
      schema: { operationId: 'createCheckPolicy', summary: 'Create a check policy', description: `A name taken (ignoring case) is 409. ${RULES}`, tags, body: policyBody, response: { 201: policySchema } },
    },
    async (request, reply) => reply.code(201).send(toPolicyDto(await checks.create(callerOf(request), request.body))),
  );

  app.get(
    '/check-policies/:id',
    { config: { access: 'read', serverWide: true }, schema: { operationId: 'getCheckPolicy', summary: 'One check policy', description: RULES, tags, params: idParams, response: { 200: policySchema } } },
    async (request) => toPolicyDto(await checks.get(callerOf(request), request.params.id)),
  );

  app.put(
    '/check-policies/:id',
    {
      config: { access: 'write', audit: 'check_policy.update', serverWide: true },
      schema: {
        operationId: 'replaceCheckPolicy', summary: 'Replace a check policy',
        description: `The whole policy, as for POST: checks left out are removed (with their states and overrides). ${RULES}`,
        tags,
        params: idParams,
        body: policyBody,
        response: { 200: policySchema },
      },
    },
    async (request) => toPolicyDto(await checks.update(callerOf(request), request.params.id, request.body)),
  );

  app.delete(
    '/check-policies/:id',
    {
      config: { access: 'write', audit: 'check_policy.delete', serverWide: true },
      schema: { operationId: 'deleteCheckPolicy', summary: 'Delete a check policy', description: `Its checks leave every agent's set; their history goes with them. ${RULES}`, tags, params: idParams, response: { 200: okSchema } },
    },
    async (request) => {
      await checks.delete(callerOf(request), request.params.id);
      return { ok: true as const };
    },
  );
};
