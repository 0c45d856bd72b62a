// /bulk-actions (issue 33, Build 2): make one (write, audited), follow it (its per-agent results, live),
// download its results as CSV, cancel what still waits. A customer-scoped caller targets and sees only
// its own customer's agents and actions.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { idParams, idRefSchema, timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import { listDescription, listResponse, newestFirstList, pageQuery, sendList } from '../../http/pagination.js';
import { agentIdSchema, platformSchema, statusSchema } from '../agents/agents.schemas.js';
import { BULK_ACTIONS } from './bulk-kinds.js';
import { resultsCsv } from './bulk-csv.js';
import type { BulkActionRow, BulkResultRow } from './bulk.repo.js';
import { MAX_BULK_AGENTS, type BulkService } from './bulk.service.js';

const tags = ['bulk actions'];
const BULK_LIST = newestFirstList(50, 'newest first (by id, descending)');
const RESULT_STATUSES = ['waiting', 'running', 'done', 'failed', 'not_connected', 'cancelled'] as const;

const targetSchema = z
  .object({
    agent_ids: z.array(agentIdSchema).min(1).max(MAX_BULK_AGENTS).optional().describe('These agents (all must exist in the caller\'s scope, else 404)'),
    all: z.literal(true).optional().describe('Every agent the filter below matches, also with no filter (every agent in scope)'),
    customer_id: idRefSchema.optional(),
    platform: platformSchema.optional(),
    status: statusSchema.optional(),
    q: z.string().min(1).max(255).optional().describe("Substring of the agent's name, hostname or primary IP, or of its customer's name, as GET /agents"),
    tag: z.string().trim().min(1).max(40).optional().describe('Agents carrying this tag (exact, ignoring case), as GET /agents'),
  })
  .strict()
  .refine(
    (t) => {
      const filtered = t.all === true || t.customer_id !== undefined || t.platform !== undefined || t.status !== undefined || t.q !== undefined || t.tag !== undefined;
      return t.agent_ids === undefined ? filtered : !filtered;
    },
    { message: 'name agent_ids, or a filter (customer_id, platform, status, q, tag; all: true for every agent), not both' },
  );


const createBody = z
  .object({
    action: z.enum(BULK_ACTIONS),
    params: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('As the REST command of the action: exec {command, timeout}; script {script_id, parameters, timeout}; update {reboot, security_only}; reboot {delay}; none for update_check and request_update'),
    target: targetSchema,
    wait_hours: z.number().int().min(0).max(168).default(24).describe('How long a result waits for an agent that is not connected (default 24; 0: not at all)'),
    skip_unsupported: z.boolean().default(false).describe('script: leave out the agents whose platform the script does not name (without it, such agents → 400 naming them)'),
  })
  .strict();

const platformCounts = z.object({ freebsd: z.number().int().optional(), linux: z.number().int().optional(), windows: z.number().int().optional(), unknown: z.number().int().optional() });
const previewSchema = z.object({
  agents: z.number().int().describe('How many agents the target matches now'),
  platforms: platformCounts.describe('Those agents by platform (unknown: pre-registered, not registered yet)'),
  applies_to: z.array(platformSchema).nullable().describe("script: the script's platforms; null for other actions"),
  script_name: z.string().nullable(),
  unsupported: z.array(z.object({ agent_id: z.string(), agent_name: z.string(), platform: platformSchema })).describe('script: the agents it does not apply to (at most 100 listed)'),
  unsupported_count: z.number().int(),
});

const resultSchema = z.object({
  agent_id: z.string(),
  agent_name: z.string(),
  status: z.enum(RESULT_STATUSES).describe('waiting: for the agent to connect; not_connected: it did not before the wait ended'),
  result: z.record(z.string(), z.unknown()).nullable().describe('exec and scripts: exit_code and the first 4 KiB of stdout and stderr; other actions: the agent\'s answer'),
  error: z.string().nullable(),
  history_id: z.number().int().nullable().describe('The command history entry (exec and scripts) with the whole output'),
  started_at: timestampSchema.nullable(),
  finished_at: timestampSchema.nullable(),
});

const countsSchema = z.object(Object.fromEntries(RESULT_STATUSES.map((s) => [s, z.number().int()])) as Record<(typeof RESULT_STATUSES)[number], z.ZodNumber>);

const actionSchema = z
  .object({
    id: z.number().int(),
    action: z.enum(BULK_ACTIONS),
    params: z.record(z.string(), z.unknown()),
    target: z.record(z.string(), z.unknown()),
    actor: z.string(),
    task_id: z.number().int().nullable(),
    created_at: timestampSchema,
    expires_at: timestampSchema.describe('Results still waiting then end as not_connected'),
    counts: countsSchema,
    finished: z.boolean().describe('No result waits or runs'),
  })
  .meta({ id: 'BulkAction' });

const actionWithResults = actionSchema.extend({ results: z.array(resultSchema) }).meta({ id: 'BulkActionWithResults' });

type Counts = Partial<Record<(typeof RESULT_STATUSES)[number], number>>;

function toAction(row: BulkActionRow, counts: Counts = {}): z.infer<typeof actionSchema> {
  const full = Object.fromEntries(RESULT_STATUSES.map((s) => [s, counts[s] ?? 0])) as z.infer<typeof countsSchema>;
  return {
    id: Number(row.id),
    action: row.action as (typeof BULK_ACTIONS)[number],
    params: row.params,
    target: row.target,
    actor: row.actor,
    task_id: row.task_id === null ? null : Number(row.task_id),
    created_at: toTimestamp(row.created_at),
    expires_at: toTimestamp(row.expires_at),
    counts: full,
    finished: full.waiting + full.running === 0,
  };
}

const toResult = (r: BulkResultRow): z.infer<typeof resultSchema> => ({
  agent_id: r.agent_id,
  agent_name: r.agent_name,
  status: r.status,
  result: r.result,
  error: r.error,
  history_id: r.history_id === null ? null : Number(r.history_id),
  started_at: toTimestamp(r.started_at),
  finished_at: toTimestamp(r.finished_at),
});

function withResults(action: BulkActionRow, results: BulkResultRow[]) {
  const counts: Counts = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return { ...toAction(action, counts), results: results.map(toResult) };
}

export const bulkRoutes: FastifyPluginAsyncZod<{ bulk: BulkService }> = async (app, { bulk }) => {
  app.post(
    '/bulk-actions',
    {
      config: { access: 'write', audit: 'bulk.create' },
      schema: {
        summary: 'Run one action on many agents',
        description:
          `The target is resolved now (at most ${MAX_BULK_AGENTS} agents, within the caller's scope; none → 400). ` +
          'A script whose platforms leave out some of those agents → 400 naming them, unless `skip_unsupported` (then it runs on the others; none left → 400); POST /bulk-actions/preview tells beforehand. Connected agents run at once ' +
          '(16 at a time per server); the others wait until they connect or `wait_hours` ends. exec and scripts go into the command history. ' +
          'request_update sets the update flag of every target at once (no connection needed). Follow it with GET /bulk-actions/{id}.',
        tags,
        body: createBody,
        response: { 201: actionWithResults },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const made = await bulk.create(caller, request.body);
      const { action, results } = await bulk.get(caller, Number(made.id));
      return reply.code(201).send(withResults(action, results));
    },
  );

  app.post(
    '/bulk-actions/preview',
    {
      // Changes nothing, so nothing to audit (every other POST is).
      config: { access: 'write', audit: false },
      schema: {
        summary: 'What a bulk action would run on, without starting it',
        description: 'The same body as POST /bulk-actions (same checks and 400s); nothing is made or audited. For a script, which agents of the target its platforms leave out.',
        tags,
        body: createBody,
        response: { 200: previewSchema },
      },
    },
    async (request) => {
      const preview = await bulk.preview(callerOf(request), request.body);
      return {
        agents: preview.agents,
        platforms: preview.platforms,
        applies_to: preview.appliesTo,
        script_name: preview.scriptName,
        unsupported: preview.unsupported.slice(0, 100).map((a) => ({ agent_id: a.id, agent_name: a.name, platform: a.platform! })),
        unsupported_count: preview.unsupported.length,
      };
    },
  );

  app.get(
    '/bulk-actions',
    {
      config: { access: 'read' },
      schema: { summary: 'Bulk actions, newest first, with their result counts', description: listDescription(BULK_LIST), tags, querystring: z.object(pageQuery(BULK_LIST)), response: { 200: listResponse(actionSchema, BULK_LIST) } },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      return sendList(request, reply, BULK_LIST, {
        item: actionSchema,
        dto: (entry: { row: BulkActionRow; counts: Counts }) => toAction(entry.row, entry.counts),
        fetch: async (page) => {
          const listed = await bulk.list(caller, page);
          const counts = await bulk.counts(listed.items.map((r) => Number(r.id)));
          return { ...listed, items: listed.items.map((row) => ({ row, counts: counts.get(Number(row.id)) ?? {} })) };
        },
      });
    },
  );

  app.get(
    '/bulk-actions/:id',
    { config: { access: 'read' }, schema: { summary: 'One bulk action with a result per agent (poll it to follow)', tags, params: idParams, response: { 200: actionWithResults } } },
    async (request) => {
      const { action, results } = await bulk.get(callerOf(request), request.params.id);
      return withResults(action, results);
    },
  );

  app.get(
    '/bulk-actions/:id/results.csv',
    {
      config: { access: 'read' },
      schema: {
        summary: 'The results as CSV (RFC 4180, UTF-8)',
        description: 'One row per agent: agent, agent_id, status, exit_code, error, output (first line of stdout, or stderr), started_at, finished_at. Cells that a spreadsheet would read as a formula start with a quote.',
        tags,
        params: idParams,
        response: { 200: { description: 'CSV', content: { 'text/csv': { schema: z.string() } } } },
      },
    },
    async (request, reply) => {
      const { action, results } = await bulk.get(callerOf(request), request.params.id);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="bulk-${Number(action.id)}-${action.action}.csv"`)
        .send(resultsCsv(results));
    },
  );

  app.delete(
    '/bulk-actions/:id',
    {
      config: { access: 'write', audit: 'bulk.cancel' },
      schema: { summary: 'Cancel the results still waiting for their agent', description: 'Running ones finish.', tags, params: idParams, response: { 200: z.object({ cancelled: z.number().int() }) } },
    },
    async (request) => ({ cancelled: await bulk.cancel(callerOf(request), request.params.id) }),
  );
};
