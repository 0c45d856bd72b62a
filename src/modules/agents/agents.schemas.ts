// Agent request and response shapes (contract §2).
import { z } from 'zod';
import { idRefSchema, idSchema, timestampSchema, toTimestamp, withoutNul } from '../../http/common-schemas.js';
import { allByDefault, newestFirstList, pageQuery } from '../../http/pagination.js';
import { statusOf } from './agent-status.js';
import { AGENT_SORTS, PENDING_HOSTNAME } from './agents.repo.js';
import type { Agent } from './agents.service.js';

/** Agent ids are hex, 16 to 64 characters; upper-case input is accepted and stored lower-case. */
export const agentIdSchema = z
  .string()
  .regex(/^[0-9a-fA-F]{16,64}$/, 'must be 16 to 64 hexadecimal characters')
  .transform((v) => v.toLowerCase());

export const agentParams = z.object({ id: agentIdSchema });
export const platformSchema = z.enum(['freebsd', 'linux', 'windows']);
export const statusSchema = z.enum(['online', 'stale', 'offline', 'unknown']);
export const eventTypeSchema = z.enum(['online', 'offline', 'stale', 'connected', 'disconnected']);

const agentName = z.string().trim().min(1).max(255);
const hostname = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .refine((v) => v !== PENDING_HOSTNAME, `${PENDING_HOSTNAME} is reserved for pre-registered agents`);

export const preRegisterBody = z.object({
  name: agentName,
  customer_id: idRefSchema.nullable().optional(),
});

/** GET /agents and GET /customers/{id}/agents: all without `limit` (spec: "all agents"). */
export const AGENT_LIST = allByDefault(
  'by `sort` (default `name`): its value ignoring case (`status`: offline, stale, unknown, online; `last_heartbeat`: never seen first; a missing customer, platform or version first), then the name ignoring case, then the id; `order=desc` reverses the whole order',
);

export const agentOrderQuery = {
  sort: z.enum(AGENT_SORTS).default('name').describe('Column to order by (default name)'),
  order: z.enum(['asc', 'desc']).default('asc').describe('asc (default) or desc'),
  ...pageQuery(AGENT_LIST),
};

export const listAgentsQuery = z.object({
  customer_id: idSchema.optional(),
  status: statusSchema.optional(),
  platform: platformSchema.optional(),
  q: z.string().min(1).max(255).optional().describe('Substring of name or hostname (case-insensitive)'),
  ...agentOrderQuery,
});

export const customerIdBody = z.object({ customer_id: idRefSchema });

export const registerBody = z.object({
  agent_id: agentIdSchema.optional(),
  name: agentName.optional(),
  hostname,
  platform: platformSchema,
  agent_version: z.string().max(64).optional(),
});

export const registerResponse = z.object({ agent_id: z.string(), name: z.string(), pre_registered: z.boolean() });

/** Only the fields the backend reads; everything else in the body is stored untouched. */
export const heartbeatBody = z.looseObject({
  agent_id: agentIdSchema,
  platform: platformSchema,
  // Copied into the agent row, so checked here: the input guard leaves the heartbeat's body as sent.
  hostname: withoutNul(hostname).optional(),
  agent_version: withoutNul(z.string().max(64)).optional(),
  agent_sha256: z.string().regex(/^[0-9a-fA-F]{64}$/).optional(),
});

export const heartbeatResponse = z.object({
  ok: z.literal(true),
  status: z.literal('online'),
  server_time: timestampSchema,
  update_available: z.boolean(),
  update: z
    .object({
      version: z.string(),
      sha256: z.string(),
      size: z.number().int(),
      download_url: z.string(),
      signature: z.string().nullable().describe('Detached Ed25519 signature of the firmware (base64), null when it was uploaded without'),
    })
    .optional()
    .describe('Only when update_available'),
});

export const updaterStateSchema = z.enum(['installing', 'healthy', 'rolled_back', 'rollback_failed', 'refused']);

/** The on-device updater's latest report (POST /agents/{id}/updater-report). */
export const updaterReportSchema = z
  .object({
    state: updaterStateSchema,
    version: z.string().nullable().describe('The firmware version the report is about'),
    message: z.string().nullable().describe("The updater's own words: why it rolled back or refused, what failed"),
    reported_at: timestampSchema.describe('When the server received the report'),
  })
  .meta({ id: 'UpdaterReport' });

export const agentSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    hostname: z.string(),
    platform: platformSchema.nullable(),
    customer_id: z.number().int().nullable(),
    status: statusSchema,
    last_heartbeat: timestampSchema.nullable(),
    update_requested: z.boolean(),
    agent_version: z.string().nullable(),
    connected: z.boolean().describe('Its WebSocket is open now'),
    created_at: timestampSchema,
    updater: updaterReportSchema.nullable().describe("The on-device updater's latest report; null until its first"),
  })
  .meta({ id: 'Agent' });

export const customerAgentSchema = agentSchema
  .extend({ last_api_key: z.string().describe('Hint of the key of the latest heartbeat; "" until one arrived') })
  .meta({ id: 'CustomerAgent' });

export const agentWithSystemSchema = agentSchema
  .extend({ system: z.unknown().describe('The latest heartbeat body exactly as the agent sent it (null before)') })
  .meta({ id: 'AgentWithSystem' });

export const EVENT_LIST = newestFirstList(100);

export const eventsQuery = z.object({ type: eventTypeSchema.optional(), ...pageQuery(EVENT_LIST) });

export const eventSchema = z
  .object({ id: z.number().int(), agent_id: z.string(), type: eventTypeSchema, created_at: timestampSchema })
  .meta({ id: 'AgentEvent' });

export function toAgentDto(a: Agent, now: Date, connected: boolean): z.infer<typeof agentSchema> {
  return {
    id: a.id,
    name: a.name,
    hostname: a.hostname,
    platform: a.platform,
    customer_id: a.customer_id,
    status: statusOf(a.last_heartbeat, now),
    last_heartbeat: toTimestamp(a.last_heartbeat),
    update_requested: a.update_requested,
    agent_version: a.agent_version,
    connected,
    created_at: toTimestamp(a.created_at),
    updater:
      a.updater_state === null
        ? null
        : { state: a.updater_state, version: a.updater_version, message: a.updater_message, reported_at: toTimestamp(a.updater_reported_at ?? a.created_at) },
  };
}

/** The agent object with the stored system data spliced in as raw JSON text, never re-serialised. */
export function agentJsonWithSystem(dto: z.infer<typeof agentSchema>, systemText: string | null): string {
  return `${JSON.stringify(dto).slice(0, -1)},"system":${systemText ?? 'null'}}`;
}
