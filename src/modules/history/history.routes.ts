// The command history (issue 33, Build 3): GET /history (fleet-wide, searchable), GET /agents/{id}/history
// and GET /history/{id} (with the whole stored output). Read access; a customer-scoped key sees its
// customer's agents' entries only.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { idParams, timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import { listDescription, listResponse, newestFirstList, pageQuery, sendList } from '../../http/pagination.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import { agentParams } from '../agents/agents.schemas.js';
import type { AgentService } from '../agents/agents.service.js';
import { assertInScope, scopeOf } from '../auth/caller.js';
import { OUTPUT_CAP_BYTES, unpackOutput, type CommandHistory } from './command-history.js';
import * as repo from './history.repo.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

const tags = ['history'];
const HISTORY_LIST = newestFirstList(50, 'newest first (by id, descending)');
const SOURCES = ['exec', 'script', 'bulk', 'task'] as const;

const historyQuery = z.object({
  ...pageQuery(HISTORY_LIST),
  source: z.enum(SOURCES).optional().describe('exec (ad hoc), script (from the library), bulk (a bulk action), task'),
  q: z.string().min(1).max(255).optional().describe('Substring (case-insensitive) of the command, script name, who ran it, the agent name or the first 2 KiB of the output'),
});

export const historyEntrySchema = z
  .object({
    id: z.number().int(),
    agent_id: z.string(),
    agent_name: z.string(),
    source: z.enum(SOURCES),
    actor_type: z.enum(['user', 'api_key', 'system']),
    actor: z.string().describe('The user name, the key hint, or for tasks and bulk actions what started it'),
    script_id: z.number().int().nullable(),
    script_name: z.string().nullable(),
    command: z.string(),
    started_at: timestampSchema,
    finished_at: timestampSchema.nullable(),
    duration_ms: z.number().int().nullable(),
    status: z
      .enum(['running', 'completed', 'failed', 'error', 'lost'])
      .describe('completed: exit code 0; failed: another exit code; error: no answer (not connected, timeout, …, see `error`); lost: no answer recorded by its deadline (the server stopped meanwhile)'),
    exit_code: z.number().int().nullable(),
    error: z.string().nullable(),
    output_bytes: z.number().int().describe('Bytes of stdout and stderr as the agent sent them'),
    output_truncated: z.boolean().describe(`More than ${OUTPUT_CAP_BYTES / 1024} KiB: the stored output is cut`),
    output_preview: z.string().describe('The first 2 KiB of stdout (and of stderr)'),
  })
  .meta({ id: 'CommandHistoryEntry' });

const historyDetailSchema = historyEntrySchema
  .extend({ stdout: z.string().nullable(), stderr: z.string().nullable() })
  .meta({ id: 'CommandHistoryDetail' });

function toEntry(row: repo.HistoryRow, now: Date): z.infer<typeof historyEntrySchema> {
  const deadline = row.started_at.getTime() + (row.timeout_s + 30) * 1000;
  const status =
    row.finished_at === null
      ? now.getTime() > deadline
        ? 'lost'
        : 'running'
      : row.error !== null
        ? 'error'
        : row.exit_code === 0
          ? 'completed'
          : 'failed';
  return {
    id: Number(row.id),
    agent_id: row.agent_id,
    agent_name: row.agent_name,
    source: row.source,
    actor_type: row.actor_type,
    actor: row.actor,
    script_id: row.script_id,
    script_name: row.script_name,
    command: row.command,
    started_at: toTimestamp(row.started_at),
    finished_at: toTimestamp(row.finished_at),
    duration_ms: row.finished_at === null ? null : row.finished_at.getTime() - row.started_at.getTime(),
    status,
    exit_code: row.exit_code,
    error: row.error,
    output_bytes: row.output_bytes,
    output_truncated: row.output_truncated,
    output_preview: row.output_preview,
  };
}

export interface HistoryRouteDeps {
  db: Kysely<Database>;
  /** Reads wait for its writes still in flight, so a caller always sees the exec it just ran. */
  history: CommandHistory;
  agents: AgentService;
  clock: Clock;
}

export const historyRoutes: FastifyPluginAsyncZod<HistoryRouteDeps> = async (app, { db, history, agents, clock }) => {
  app.get(
    '/history',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Command history of the fleet: every exec, ad hoc or scripted, newest first',
        description: listDescription(
          HISTORY_LIST,
          "Without the output itself (GET /history/{id} has it). A customer-scoped key sees its customer's agents only. A command still running is listed with status `running` (in cluster mode, by another instance than the one running it, from 100 ms after it started).",
        ),
        tags,
        querystring: historyQuery,
        response: { 200: listResponse(historyEntrySchema, HISTORY_LIST) },
      },
    },
    async (request, reply) => {
      await history.flush();
      const { source, q } = request.query;
      const scope = scopeOf(callerOf(request));
      const now = clock.now();
      return sendList(request, reply, HISTORY_LIST, { item: historyEntrySchema, dto: (row: repo.HistoryRow) => toEntry(row, now), fetch: (page) => repo.listHistory(db, { scope, source, q }, page) });
    },
  );

  app.get(
    '/agents/:id/history',
    {
      config: { access: 'read' },
      schema: {
        summary: "One agent's command history, newest first",
        description: listDescription(HISTORY_LIST, 'As GET /history, for one agent (404 outside the caller\'s scope).'),
        tags,
        params: agentParams,
        querystring: historyQuery,
        response: { 200: listResponse(historyEntrySchema, HISTORY_LIST) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const agent = await agents.get(caller, request.params.id);
      await history.flush();
      const { source, q } = request.query;
      const now = clock.now();
      return sendList(request, reply, HISTORY_LIST, {
        item: historyEntrySchema,
        dto: (row: repo.HistoryRow) => toEntry(row, now),
        fetch: (page) => repo.listHistory(db, { scope: scopeOf(caller), agentId: agent.id, source, q }, page),
      });
    },
  );

  app.get(
    '/history/:id',
    {
      config: { access: 'read' },
      schema: {
        summary: 'One command history entry with its stored output',
        description: `stdout and stderr as stored: together at most ${OUTPUT_CAP_BYTES / 1024} KiB (\`output_truncated\` says when cut); null while running or when the command got no answer.`,
        tags,
        params: idParams,
        response: { 200: historyDetailSchema },
      },
    },
    async (request) => {
      await history.flush();
      const row = await repo.findHistory(db, request.params.id);
      if (!row) throw new AppError('NOT_FOUND', 'History entry not found');
      assertInScope(callerOf(request), row.customer_id, 'History entry');
      const output = unpackOutput(row.output);
      return { ...toEntry(row, clock.now()), stdout: output?.stdout ?? null, stderr: output?.stderr ?? null };
    },
  );
};
