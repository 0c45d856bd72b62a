// Tasks (contract §10): POST /tasks, GET /tasks, GET /tasks/{id}, GET /tasks/{id}/runs,
// POST /tasks/{id}/run, DELETE /tasks/{id}; and PATCH /tasks/{id} (issue 33: a recurring task could only
// be cancelled and created anew to change it).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { idParams, idRefSchema, idSchema, timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import { listDescription, listResponse, newestFirstList, pageQuery, sendList } from '../../http/pagination.js';
import { agentIdSchema, platformSchema } from '../agents/agents.schemas.js';
import { GROUP_KINDS, TASK_KINDS } from './task-kinds.js';
import type { Task, TaskRun, TaskService } from './tasks.service.js';

const tags = ['tasks'];
const TASK_STATUSES = ['scheduled', 'running', 'completed', 'completed_with_warning', 'error', 'cancelled'] as const;
const json = z.record(z.string(), z.unknown());
/** Tasks and runs accumulate without end (recurring tasks run every few minutes): a page by default. */
const TASK_LIST = newestFirstList(100, 'newest first (by id, descending)');
const RUN_LIST = TASK_LIST;

const targetSchema = z
  .object({
    customer_id: idRefSchema.optional(),
    platform: platformSchema.optional(),
    tag: z.string().trim().min(1).max(40).optional().describe('Agents carrying this tag (exact, ignoring case)'),
  })
  .strict()
  .refine((t) => Object.keys(t).length > 0, 'name a customer_id, a platform or a tag (or several)');

const taskSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  agent_id: z.string().nullable().describe('The agent of a single-agent task; null for a group task'),
  target: json.nullable().describe('A group task\'s agents {customer_id?, platform?, tag?}, resolved at every run; null for a single-agent task'),
  customer_number: z.string().nullable().describe("The agent's customer number when the task was created"),
  kind: z.enum(TASK_KINDS),
  params: json,
  status: z.enum(TASK_STATUSES),
  run_at: timestampSchema.nullable().describe('Planned time of a one-off task'),
  cron: z.string().nullable().describe('Five-field cron expression in UTC of a recurring task'),
  next_run_at: timestampSchema.nullable(),
  last_run_at: timestampSchema.nullable(),
  webhook_url: z.string().nullable(),
  agent_wait_timeout: z.number().int().nullable().describe('Seconds a run waits for the agent when it is not connected at the due time; null for a group task'),
  result: json.nullable().describe('Result of the last run; update kinds add health_check {agent_online, checked_at}'),
  created_at: timestampSchema,
});

const runSchema = z.object({
  id: z.number().int(),
  task_id: z.number().int(),
  status: z.enum(TASK_STATUSES),
  started_at: timestampSchema,
  finished_at: timestampSchema.nullable(),
  result: json.nullable(),
  error: z.string().nullable().describe('Why the run failed'),
  waiting_until: timestampSchema.nullable().describe('While the run waits for its agent to connect (status running, nothing sent yet): until when; null otherwise'),
  webhook: json.nullable().describe('Delivery outcome {url, attempts, delivered, status_code, error, last_attempt_at}'),
});

const createBody = z.object({
  agent_id: agentIdSchema.optional().describe('One agent; or give `target` instead'),
  target: targetSchema.optional().describe(`A group of agents, resolved at every run (${GROUP_KINDS.join(', ')} only); a customer-scoped caller's groups stay in its customer`),
  kind: z.enum(TASK_KINDS),
  name: z.string().trim().max(200).optional(),
  params: json.optional().describe('update/security_update {reboot}; dist_upgrade {version, reboot}; reboot {delay}; exec {command, timeout}; backup {}; script {script_id, parameters, timeout} (a saved script, see /scripts)'),
  run_at: timestampSchema.optional().describe('Run once at this time (default now)'),
  cron: z.string().max(200).optional().describe('Run at every match of this five-field cron expression (UTC) instead'),
  webhook_url: z.string().max(2000).optional().describe('POSTed {event:"task.finished", …} after each run, signed with x-rmm-signature'),
  health_check_timeout: z.number().int().min(1).max(86_400).default(600).describe('Seconds an update run waits for the agent to come back'),
  agent_wait_timeout: z
    .number()
    .int()
    .min(0)
    .max(86_400)
    .optional()
    .describe('Seconds a run waits for the agent when it is not connected at the due time (default 600; 0: the run fails at once); single-agent tasks only'),
});

const updateBody = z
  .object({
    name: createBody.shape.name,
    params: json.optional().describe("Checked against the task's kind, which cannot change"),
    run_at: timestampSchema.optional().describe('Run once at this time instead (a recurring task becomes a one-off)'),
    cron: createBody.shape.cron.describe('Run at every match of this expression (UTC) instead (a one-off task becomes recurring)'),
    webhook_url: z.string().max(2000).nullable().optional().describe('null removes the webhook'),
    health_check_timeout: z.number().int().min(1).max(86_400).optional(),
    agent_wait_timeout: createBody.shape.agent_wait_timeout,
  })
  .strict()
  .refine((b) => Object.values(b).some((v) => v !== undefined), 'give at least one field to change');

const taskDto = (t: Task) => ({
  id: Number(t.id),
  name: t.name,
  agent_id: t.agent_id,
  target: t.target,
  customer_number: t.customer_number,
  kind: t.kind as (typeof TASK_KINDS)[number],
  params: t.params,
  status: t.status as (typeof TASK_STATUSES)[number],
  run_at: toTimestamp(t.run_at),
  cron: t.cron,
  next_run_at: toTimestamp(t.next_run_at),
  last_run_at: toTimestamp(t.last_run_at),
  webhook_url: t.webhook_url,
  agent_wait_timeout: t.agent_wait_timeout,
  result: t.result,
  created_at: toTimestamp(t.created_at),
});

const runDto = (r: TaskRun) => ({
  ...r,
  id: Number(r.id),
  task_id: Number(r.task_id),
  status: r.status as (typeof TASK_STATUSES)[number],
  started_at: toTimestamp(r.started_at),
  finished_at: toTimestamp(r.finished_at),
  waiting_until: toTimestamp(r.waiting_until),
});

export const taskRoutes: FastifyPluginAsyncZod<{ tasks: TaskService }> = async (app, { tasks }) => {
  app.post(
    '/tasks',
    {
      config: { access: 'write', audit: 'task.create' },
      schema: {
        summary: 'Create a planned (run_at) or recurring (cron) task for an agent',
        description:
          'The agent must be one the caller can see (else 404). Kind `backup` is for firewalls: an agent registered with another platform → 400. ' +
          'An agent that is not connected when the task is due is waited for up to `agent_wait_timeout` s ' +
          '(default 600; the run is `running` with `waiting_until` set, and runs as soon as the agent connects to any server of a cluster; the wait goes on across a server restart); ' +
          'if it does not connect in time, the run ends in `error` with the reason. ' +
          'A group task (`target` instead of `agent_id`) runs as a bulk action over the agents its target matches at that moment (GET /bulk-actions/{result.bulk_action_id}): ' +
          'agents that are not connected are waited for up to 24 h; the run lists one result per agent and ends completed (all done), error (some failed) or ' +
          'completed_with_warning (some never connected); update kinds of a group do not wait for the health check. Update kinds wait up to health_check_timeout for the agent to come back: a new connection → completed; still away → completed_with_warning (result.health_check). Webhook URLs on loopback, link-local or cloud-metadata addresses → 400.',
        tags,
        body: createBody,
        response: { 201: taskSchema },
      },
    },
    async (request, reply) => {
      const { run_at: runAt, ...rest } = request.body;
      const task = await tasks.create(callerOf(request), { ...rest, ...(runAt ? { run_at: new Date(runAt) } : {}) });
      return reply.code(201).send(taskDto(task));
    },
  );

  app.get(
    '/tasks',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Tasks, newest first',
        description: listDescription(TASK_LIST),
        tags,
        querystring: z.object({ status: z.enum(TASK_STATUSES).optional(), agent_id: agentIdSchema.optional(), customer_id: idSchema.optional(), ...pageQuery(TASK_LIST) }),
        response: { 200: listResponse(taskSchema, TASK_LIST) },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const caller = callerOf(request);
      const filter = { status: q.status, agentId: q.agent_id, customerId: q.customer_id };
      return sendList(request, reply, TASK_LIST, { item: taskSchema, dto: taskDto, fetch: (page) => tasks.list(caller, filter, page) });
    },
  );

  app.get('/tasks/:id', { config: { access: 'read' }, schema: { summary: 'One task', tags, params: idParams, response: { 200: taskSchema } } }, async (request) =>
    taskDto(await tasks.get(callerOf(request), request.params.id)),
  );

  app.get(
    '/tasks/:id/runs',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Runs of a task, newest first',
        description: listDescription(RUN_LIST),
        tags,
        params: idParams,
        querystring: z.object(pageQuery(RUN_LIST)),
        response: { 200: listResponse(runSchema, RUN_LIST) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      return sendList(request, reply, RUN_LIST, { item: runSchema, dto: runDto, fetch: (page) => tasks.runs(caller, request.params.id, page) });
    },
  );

  app.post(
    '/tasks/:id/run',
    { config: { access: 'write', audit: 'task.run' }, schema: { summary: 'Run the task now (409 while it runs or once cancelled)', tags, params: idParams, response: { 200: taskSchema } } },
    async (request) => taskDto(await tasks.runNow(callerOf(request), request.params.id)),
  );

  app.patch(
    '/tasks/:id',
    {
      config: { access: 'write', audit: 'task.update' },
      schema: {
        summary: "Edit a task's name, params, schedule or webhook (409 while it runs or once cancelled)",
        description:
          'Fields left out stay. A new schedule (`run_at` or `cron`, not both) makes the task scheduled again from its next time, so a finished one-off task given a new time runs again. The kind and the agent cannot change.',
        tags,
        params: idParams,
        body: updateBody,
        response: { 200: taskSchema },
      },
    },
    async (request) => {
      const { run_at: runAt, ...rest } = request.body;
      return taskDto(await tasks.update(callerOf(request), request.params.id, { ...rest, ...(runAt ? { run_at: new Date(runAt) } : {}) }));
    },
  );

  app.delete(
    '/tasks/:id',
    { config: { access: 'write', audit: 'task.cancel' }, schema: { summary: 'Cancel the task: no further runs (409 while a run is under way; a run still waiting for its agent is cancelled with it)', tags, params: idParams, response: { 200: taskSchema } } },
    async (request) => taskDto(await tasks.cancel(callerOf(request), request.params.id)),
  );
};
