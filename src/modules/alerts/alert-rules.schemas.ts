// Alert rule request and response shapes (issue 31). The body is a union on `kind`, so the OpenAPI
// document shows each kind's params with their defaults, and a bad params field is a 400 whose
// details name it (`params.threshold`).
import { z } from 'zod';
import { idRefSchema, idSchema, timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import { allByDefault, pageQuery } from '../../http/pagination.js';
import { agentIdSchema } from '../agents/agents.schemas.js';
import type { AlertRule } from './alert-rules.service.js';
import { MAX_RULE_CHANNELS } from './alert-rules.service.js';
import { RULE_KINDS, RULE_PARAMS } from './rule-params.js';

export const RULE_LIST = allByDefault('by id');

export const scopeFields = {
  customer_id: idRefSchema.nullable().optional().describe('Only this customer’s agents (null or absent: see agent_id)'),
  agent_id: agentIdSchema.nullable().optional().describe('Only this agent (null or absent with customer_id also absent: every agent, a global rule)'),
};

const common = {
  name: z.string().trim().min(1).max(100),
  enabled: z.boolean().default(true),
  ...scopeFields,
  channel_ids: z
    .array(idRefSchema)
    .max(MAX_RULE_CHANNELS)
    .default([])
    .describe('Channels notified (repeats count once); each global or of the rule’s customer (an agent rule: the agent’s customer)'),
  reminder_minutes: z.number().int().min(5).max(10_080).nullable().default(null).describe('Remind every N minutes while firing and unacknowledged; null: never'),
};

function bodyOf<K extends (typeof RULE_KINDS)[number]>(kind: K) {
  return z.object({ kind: z.literal(kind), ...common, params: RULE_PARAMS[kind].optional() });
}

export const ruleBody = z.discriminatedUnion('kind', [
  bodyOf('agent_offline').describe('params.minutes below the status threshold (2 for stale, 5 for offline) is stored as given but fires at the threshold'),
  bodyOf('metric_threshold'),
  bodyOf('certificate_expiry'),
  bodyOf('task_failed'),
  bodyOf('backup_age'),
  bodyOf('update_pending'),
  bodyOf('check_state'),
]);

export const ruleListQuery = z.object({
  customer_id: idSchema.optional().describe('Rules of this customer: its own and its agents’ (not the global ones)'),
  agent_id: agentIdSchema.optional().describe('Rules of exactly this agent'),
  kind: z.enum(RULE_KINDS).optional(),
  enabled: z.enum(['true', 'false']).transform((v) => v === 'true').optional(),
  ...pageQuery(RULE_LIST),
});

export const ruleSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    kind: z.enum(RULE_KINDS),
    enabled: z.boolean(),
    customer_id: z.number().int().nullable(),
    agent_id: z.string().nullable(),
    params: z.record(z.string(), z.unknown()).describe('The kind’s params with every default applied'),
    channel_ids: z.array(z.number().int()),
    reminder_minutes: z.number().int().nullable(),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'AlertRule' });

export function toRuleDto(r: AlertRule): z.infer<typeof ruleSchema> {
  return {
    id: r.id,
    name: r.name,
    kind: r.kind,
    enabled: r.enabled,
    customer_id: r.customer_id,
    agent_id: r.agent_id,
    params: r.params,
    channel_ids: r.channel_ids.map(Number),
    reminder_minutes: r.reminder_minutes,
    created_at: toTimestamp(r.created_at),
    updated_at: toTimestamp(r.updated_at),
  };
}
