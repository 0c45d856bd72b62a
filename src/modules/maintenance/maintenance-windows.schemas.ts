// Maintenance window request and response shapes (issue 31).
import { z } from 'zod';
import { idSchema, timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import { allByDefault, pageQuery } from '../../http/pagination.js';
import { agentIdSchema } from '../agents/agents.schemas.js';
import { scopeFields } from '../alerts/alert-rules.schemas.js';
import { MAX_WINDOW_MINUTES, type MaintenanceWindow } from './maintenance-windows.service.js';

export const WINDOW_LIST = allByDefault('by id');

export const windowBody = z.object({
  name: z.string().trim().min(1).max(100),
  customer_id: scopeFields.customer_id.describe('Only this customer’s agents (null or absent: see agent_id)'),
  agent_id: scopeFields.agent_id.describe('Only this agent (null or absent with customer_id also absent: every agent, a global window)'),
  starts_at: timestampSchema.nullable().optional().describe('One-off: the window opens at this time'),
  ends_at: timestampSchema.nullable().optional().describe('One-off: and closes at this time (after starts_at; not included)'),
  cron: z.string().max(200).nullable().optional().describe('Recurring: opens at every match of this five-field cron expression, in UTC'),
  duration_minutes: z.number().int().min(1).max(MAX_WINDOW_MINUTES).nullable().optional().describe('Recurring: and stays open this many minutes'),
});

export const windowListQuery = z.object({
  customer_id: idSchema.optional().describe('Windows of this customer: its own and its agents’ (not the global ones)'),
  agent_id: agentIdSchema.optional().describe('Windows of exactly this agent'),
  active: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .describe('true: only windows open now; false: only windows not open now'),
  ...pageQuery(WINDOW_LIST),
});

export const windowSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    customer_id: z.number().int().nullable(),
    agent_id: z.string().nullable(),
    starts_at: timestampSchema.nullable().describe('One-off windows; null for recurring ones'),
    ends_at: timestampSchema.nullable().describe('One-off windows; null for recurring ones'),
    cron: z.string().nullable().describe('Recurring windows (UTC); null for one-off ones'),
    duration_minutes: z.number().int().nullable().describe('Recurring windows; null for one-off ones'),
    active_now: z.boolean().describe('Whether the window is open now'),
    next_start: timestampSchema.nullable().describe('When it opens next after now: the next cron match, or starts_at while ahead (else null)'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'MaintenanceWindow' });

export function toWindowDto(w: MaintenanceWindow): z.infer<typeof windowSchema> {
  return {
    id: w.id,
    name: w.name,
    customer_id: w.customer_id,
    agent_id: w.agent_id,
    starts_at: toTimestamp(w.starts_at),
    ends_at: toTimestamp(w.ends_at),
    cron: w.cron,
    duration_minutes: w.duration_minutes,
    active_now: w.active_now,
    next_start: toTimestamp(w.next_start),
    created_at: toTimestamp(w.created_at),
    updated_at: toTimestamp(w.updated_at),
  };
}
