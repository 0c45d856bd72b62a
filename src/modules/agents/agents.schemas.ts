// Agent request and response shapes (contract §2).
import { z } from 'zod';
import { idRefSchema, idSchema, timestampSchema, toTimestamp, withoutNul } from '../../http/common-schemas.js';
import { allByDefault, newestFirstList, pageQuery } from '../../http/pagination.js';
import type { Platform } from '../../db/schema.js';
import { compareVersions } from '../firmware/versions.js';
import { statusOf } from './agent-status.js';
import { AGENT_SORTS, PENDING_HOSTNAME } from './agents.repo.js';
import { DEVICE_CAPABILITIES, knownCapabilities } from '../agent-hub/device-protocol.js';
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

const MAX_TAGS = 20;
const MAX_TAG_CHARS = 40;
const MAX_NOTE_CHARS = 2000;
// Commas separate tags in the CSV export and the console; control characters have no place in a label.
// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const tagSchema = z.string().trim().min(1).max(MAX_TAG_CHARS).regex(/^[^,\u0000-\u001f\u007f]+$/, 'no commas or control characters');
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
  'by `sort` (default `name`): its value, text in natural order (ignoring case and common accents, digit runs by number: demo-2 before demo-10, 1.9 before 1.10); ' +
    '`status`: offline, stale, unknown, online; `reboot`: unknown, no, yes; a missing value first (never seen, no customer, platform, version, OS, IP, uptime, disk or update count); ' +
    'then the name in natural order, then the id; `order=desc` reverses the whole order',
);

const SORT_HELP =
  'Column to order by (default name). `os`: OS name and version; `ip`: primary IPv4 address; `uptime`: seconds; `disk`: the fullest disk\'s used percent; ' +
  '`updates`: pending update count; `reboot`: reboot needed';

export const agentOrderQuery = {
  sort: z.enum(AGENT_SORTS).default('name').describe(SORT_HELP),
  order: z.enum(['asc', 'desc']).default('asc').describe('asc (default) or desc'),
  ...pageQuery(AGENT_LIST),
};

export const listAgentsQuery = z.object({
  customer_id: idSchema.optional(),
  status: statusSchema.optional(),
  platform: platformSchema.optional(),
  q: z.string().min(1).max(255).optional().describe("Case-insensitive substring of the agent's name, hostname or primary IP, or of its customer's name"),
  tag: z.string().trim().min(1).max(MAX_TAG_CHARS).optional().describe('Agents carrying this tag (exact, ignoring case)'),
  ...agentOrderQuery,
});

/** PATCH /agents/{id}: tags and note, each optional; at least one. */
export const annotateBody = z
  .object({
    tags: z
      .array(tagSchema)
      .max(MAX_TAGS)
      .superRefine((tags, ctx) => {
        const seen = new Set<string>();
        tags.forEach((tag, i) => {
          if (seen.has(tag.toLowerCase())) ctx.addIssue({ code: 'custom', path: [i], message: `${tag} is there twice (tags ignore case)` });
          seen.add(tag.toLowerCase());
        });
      })
      .optional()
      .describe(`Replaces all tags: at most ${MAX_TAGS}, each 1 to ${MAX_TAG_CHARS} characters after trimming, no commas or control characters, unique ignoring case`),
    note: z.string().max(MAX_NOTE_CHARS).optional().describe(`Replaces the note: free text, at most ${MAX_NOTE_CHARS} characters ("" clears it)`),
  })
  .strict()
  .refine((b) => b.tags !== undefined || b.note !== undefined, { message: 'give tags, note or both' });

export const tagCountSchema = z.object({ tag: z.string(), agent_count: z.number().int() }).meta({ id: 'AgentTag' });

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
    version_outdated: z
      .boolean()
      .describe('`agent_version` is older (numeric-aware) than the newest firmware uploaded for its platform; false when either is unknown'),
    tags: z.array(z.string()).describe('Labels set with PATCH /agents/{id}; filter with `tag`'),
    note: z.string().describe('Free text set with PATCH /agents/{id}; "" when none'),
    os_name: z.string().nullable().describe('From the latest heartbeat (`os.name`); null when it did not say'),
    os_version: z.string().nullable().describe('From the latest heartbeat (`os.version`)'),
    primary_ip: z
      .string()
      .nullable()
      .describe('First IPv4 address of the interface of the default route (`routes[]`), else of the first interface not down and not loopback'),
    uptime_seconds: z.number().int().nullable().describe('`uptime_seconds` of the latest heartbeat (the uptime at `last_heartbeat`)'),
    disk_used_percent: z.number().nullable().describe("The fullest disk's used percent (`disks[].used_percent`, else from its bytes), one decimal"),
    disk_worst_mount: z.string().nullable().describe('The mount of that disk'),
    pending_updates: z
      .number()
      .int()
      .nullable()
      .describe('Entries of `updates.packages` plus `updates.pending`; 0 when `updates.available` is false; null when unknown'),
    reboot_required: z.boolean().nullable().describe('`updates.needs_reboot` of the latest heartbeat; null when unknown'),
    capabilities: z
      .array(z.enum(DEVICE_CAPABILITIES))
      .describe("What the agent's socket last announced it can do beyond the spec's commands (shell, files, processes, services); [] for agents that announce nothing"),
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

/** `latest`: the newest firmware version per platform (AgentService.latestVersions), for `version_outdated`. */
export function toAgentDto(a: Agent, now: Date, connected: boolean, latest: ReadonlyMap<Platform, string>): z.infer<typeof agentSchema> {
  const newest = a.platform === null ? undefined : latest.get(a.platform);
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
    version_outdated: a.agent_version !== null && newest !== undefined && compareVersions(a.agent_version, newest) < 0,
    tags: a.tags,
    note: a.note,
    os_name: a.os_name,
    os_version: a.os_version,
    primary_ip: a.primary_ip,
    uptime_seconds: a.uptime_seconds,
    disk_used_percent: a.disk_used_percent,
    disk_worst_mount: a.disk_worst_mount,
    pending_updates: a.pending_updates,
    reboot_required: a.reboot_required,
    capabilities: knownCapabilities(a.capabilities),
  };
}

/** The agent object with the stored system data spliced in as raw JSON text, never re-serialised. */
export function agentJsonWithSystem(dto: z.infer<typeof agentSchema>, systemText: string | null): string {
  return `${JSON.stringify(dto).slice(0, -1)},"system":${systemText ?? 'null'}}`;
}
