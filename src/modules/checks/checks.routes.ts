// An agent's checks (issue 61): its effective set with each check's latest state, a check's history of
// states, its overrides; and the fleet's failing checks. Scoped by the agent's customer.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { idSchema, okSchema, timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import { allByDefault, listDescription, listResponse, newestFirstList, pageQuery, sendList } from '../../http/pagination.js';
import { agentIdSchema, agentParams } from '../agents/agents.schemas.js';
import { CHECK_STATES, perfdataSchema } from './check-protocol.js';
import type { FailingCheck } from './check-states.repo.js';
import type { CheckService } from './checks.service.js';
import { checkIdSchema } from './policies.schemas.js';

const tags = ['checks'];
const HISTORY_LIST = newestFirstList(100, 'newest first (time, then id, descending)');
const FAILING_LIST = allByDefault('by state code, highest first (unknown 3, critical 2, warning 1), then failing longest, then agent and check');

const stateName = z.enum(CHECK_STATES);
const nameOf = (state: number) => CHECK_STATES[state] ?? 'unknown';
// Any check id shape: one that names no check is 404 (as an agent outside the caller's scope), not 400.
const checkParams = z.object({ id: agentIdSchema, check_id: z.string().min(1).max(64).describe(checkIdSchema.description ?? '') });

const agentCheckSchema = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.string(),
  policy_id: z.number().int(),
  policy_name: z.string(),
  params: z.record(z.string(), z.unknown()),
  interval_seconds: z.number().int(),
  timeout_seconds: z.number().int(),
  overridden: z.boolean(),
  state: stateName.nullable().describe('null until the agent reported a result'),
  output: z.string().nullable(),
  perfdata: z.array(perfdataSchema),
  duration_ms: z.number().int().nullable(),
  last_run_at: timestampSchema.nullable(),
  last_change_at: timestampSchema.nullable().describe('Since when the check is in its state'),
});

const agentChecksSchema = z.object({
  agent_id: z.string(),
  supported: z.boolean().describe("Whether the agent announced the capability 'checks'; an agent without it runs none"),
  version: z.string().describe('The version of the set, as sent to the agent'),
  checks: z.array(agentCheckSchema),
});

const historySchema = z.object({ state: stateName, output: z.string(), at: timestampSchema });

const overrideBody = z
  .object({
    excluded: z.boolean().default(false).describe('Leave the check out for this agent'),
    params: z.record(z.string(), z.unknown()).default({}).describe("Merged over the check's params for this agent (a threshold, a host); the result must be valid for the kind"),
    interval_seconds: z.number().int().min(10).max(86_400).nullable().default(null),
  })
  .strict();

const overrideSchema = z.object({
  check_id: z.string(),
  check_name: z.string(),
  excluded: z.boolean(),
  params: z.record(z.string(), z.unknown()),
  interval_seconds: z.number().int().nullable(),
  updated_at: timestampSchema,
});

const failingSchema = z.object({
  agent_id: z.string(),
  agent_name: z.string(),
  customer_id: z.number().int().nullable(),
  customer_name: z.string().nullable(),
  check_id: z.string(),
  check_name: z.string(),
  policy_id: z.number().int(),
  policy_name: z.string(),
  state: stateName,
  output: z.string(),
  last_run_at: timestampSchema,
  last_change_at: timestampSchema,
});

const SCOPE = "The agent must be within the caller's customer scope (else 404).";

const statusSchema = z.object({
  received_results: z.number().int().describe('Results agents sent to this instance since it started'),
  ignored_results: z.number().int().describe('Among them, results for checks the agent was not given (dropped)'),
  agents_with_sets: z.number().int().describe('Agents connected here that acknowledged a set from this instance (the current one, or the last they took)'),
  agents_retrying_sets: z.number().int().describe('Agents connected here that did not take their last set (timed out or refused); it is offered again a minute later'),
});

export const checkRoutes: FastifyPluginAsyncZod<{ checks: CheckService; status: () => z.infer<typeof statusSchema> }> = async (app, { checks, status }) => {
  app.get(
    '/checks/status',
    {
      config: { access: 'read', serverWide: true },
      schema: { operationId: 'getCheckStatus', summary: "This instance's check results", description: 'Counters of this instance (each instance of a cluster has its own).', tags, response: { 200: statusSchema } },
    },
    () => status(),
  );

  app.get(
    '/agents/:id/checks',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'listAgentChecks', summary: "An agent's checks and their states",
        description: `The checks of every policy that applies to the agent, with its overrides, as the server computes them now, and each check's latest result (state null before the first). ${SCOPE}`,
        tags,
        params: agentParams,
        response: { 200: agentChecksSchema },
      },
    },
    async (request) => {
      const found = await checks.agentChecks(callerOf(request), request.params.id);
      return {
        agent_id: found.agentId,
        supported: found.supported,
        version: found.version,
        checks: found.checks.map((c) => ({
          id: c.id,
          name: c.name,
          kind: c.kind,
          policy_id: c.policyId,
          policy_name: c.policyName,
          params: c.params,
          interval_seconds: c.interval_seconds,
          timeout_seconds: c.timeout_seconds,
          overridden: c.overridden,
          state: c.state ? nameOf(c.state.state) : null,
          output: c.state?.output ?? null,
          perfdata: (c.state?.perfdata ?? []) as Array<z.infer<typeof perfdataSchema>>,
          duration_ms: c.state?.duration_ms ?? null,
          last_run_at: c.state ? toTimestamp(c.state.last_run_at) : null,
          last_change_at: c.state ? toTimestamp(c.state.last_change_at) : null,
        })),
      };
    },
  );

  app.get(
    '/agents/:id/checks/:check_id/history',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'listCheckHistory', summary: "A check's changes of state on an agent",
        description: listDescription(HISTORY_LIST, `Every change of state (the first result too), with the output of the run that changed it. Perfdata series: GET /agents/{id}/metrics?metric=check_perf&label=<check id>/<label>. ${SCOPE}`),
        tags,
        params: checkParams,
        querystring: z.object(pageQuery(HISTORY_LIST)),
        response: { 200: listResponse(historySchema, HISTORY_LIST) },
      },
    },
    async (request, reply) =>
      sendList(request, reply, HISTORY_LIST, {
        item: historySchema,
        dto: (r: { state: number; output: string; at: Date }) => ({ state: nameOf(r.state), output: r.output, at: toTimestamp(r.at) }),
        fetch: (page) => checks.history(callerOf(request), request.params.id, request.params.check_id, page),
      }),
  );

  app.get(
    '/agents/:id/check-overrides',
    { config: { access: 'read' }, schema: { operationId: 'listCheckOverrides', summary: "An agent's overrides of its checks", description: `Not paged: at most one per check of the agent's set. ${SCOPE}`, tags, params: agentParams, response: { 200: z.array(overrideSchema) } } },
    async (request) => (await checks.overrides(callerOf(request), request.params.id)).map((o) => ({ ...o, updated_at: toTimestamp(o.updated_at) })),
  );

  app.put(
    '/agents/:id/check-overrides/:check_id',
    {
      config: { access: 'write', audit: 'check_override.set' },
      schema: {
        operationId: 'setCheckOverride', summary: 'Override one check for one agent',
        description: `Exclude the check, change params (merged over the check's; the result is checked against the kind: 400) or its interval. An unknown check is 404. The agent gets its new set at once. ${SCOPE}`,
        tags,
        params: checkParams,
        body: overrideBody,
        response: { 200: okSchema },
      },
    },
    async (request) => {
      await checks.setOverride(callerOf(request), request.params.id, request.params.check_id, request.body);
      return { ok: true as const };
    },
  );

  app.delete(
    '/agents/:id/check-overrides/:check_id',
    {
      config: { access: 'write', audit: 'check_override.delete' },
      schema: { operationId: 'deleteCheckOverride', summary: 'Remove an override', description: `404 when there is none. ${SCOPE}`, tags, params: checkParams, response: { 200: okSchema } },
    },
    async (request) => {
      await checks.deleteOverride(callerOf(request), request.params.id, request.params.check_id);
      return { ok: true as const };
    },
  );

  app.get(
    '/checks/failing',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'listFailingChecks', summary: 'Failing checks across the fleet',
        description: listDescription(FAILING_LIST, 'Checks whose latest result is WARNING, CRITICAL or UNKNOWN, on the agents the caller may see; customer_id narrows to one customer.'),
        tags,
        querystring: z.object({ customer_id: idSchema.optional(), ...pageQuery(FAILING_LIST) }),
        response: { 200: listResponse(failingSchema, FAILING_LIST) },
      },
    },
    async (request, reply) =>
      sendList(request, reply, FAILING_LIST, {
        item: failingSchema,
        dto: (r: FailingCheck) => ({ ...r, state: nameOf(r.state), last_run_at: toTimestamp(r.last_run_at), last_change_at: toTimestamp(r.last_change_at) }),
        fetch: (page) => checks.failing(callerOf(request), { customerId: request.query.customer_id }, page),
      }),
  );
};
