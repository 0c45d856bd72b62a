// Request and response schemas of /notification-channels, built from the channel types' strategies so
// the OpenAPI document shows each type's settings and secret fields exactly as they are validated.
import { z } from 'zod';
import { idRefSchema, timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import type { ChannelKind } from './channel-kind.js';
import { CHANNEL_KINDS, CHANNEL_TYPES } from './channel-types.js';
import type { Channel } from './channels.service.js';

const name = z.string().trim().min(1).max(100).describe('Shown in the rule editor and in the status (1 to 100 characters)');

/** Secrets in a request: a new value, null to clear an optional one, absent to keep what is stored. */
function secretsBody(kind: ChannelKind) {
  const shape = Object.fromEntries(
    Object.entries(kind.secrets).map(([field, spec]) => [field, spec.schema.nullable().optional().describe(`${spec.required ? 'Required. ' : ''}${spec.description}`)]),
  );
  return z.strictObject(shape).describe('Secret fields: sealed when stored and never shown again (only hints)');
}

function createMember<T extends (typeof CHANNEL_TYPES)[number]>(type: T) {
  const kind = CHANNEL_KINDS[type];
  const settingsRequired = !kind.settings.safeParse({}).success;
  return z.strictObject({
    type: z.literal(type),
    name,
    customer_id: idRefSchema.nullable().optional().describe("The owning customer; absent or null: a global channel (unscoped callers only)"),
    enabled: z.boolean().default(true),
    settings: settingsRequired ? kind.settings : kind.settings.optional(),
    secrets: secretsBody(kind).optional(),
  });
}

export const createChannelBody = z.discriminatedUnion('type', [
  createMember('email'),
  createMember('webhook'),
  createMember('ntfy'),
  createMember('teams'),
  createMember('slack'),
  createMember('discord'),
  createMember('telegram'),
]);

export const updateChannelBody = z
  .strictObject({
    type: z.enum(CHANNEL_TYPES).optional().describe("The channel's type, if given (a channel never changes type)"),
    customer_id: idRefSchema.nullable().optional().describe("The channel's customer, if given (a channel never changes customer)"),
    name,
    enabled: z.boolean().optional().describe('Absent: unchanged'),
    settings: z.record(z.string().max(100), z.unknown()).optional().describe("The channel type's settings, as in POST (a full replacement)"),
    secrets: z
      .record(z.string().max(100), z.string().max(2000).nullable())
      .optional()
      .describe("The channel type's secret fields: a value replaces, null clears an optional one, absent keeps the stored value"),
  })
  .describe('A full replacement of name and settings; secrets omitted are kept; type and customer_id, when given, must be as they are');

export const channelSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    type: z.enum(CHANNEL_TYPES),
    customer_id: z.number().int().nullable().describe('Null: a global channel'),
    enabled: z.boolean(),
    settings: z.record(z.string(), z.unknown()).describe('The non-secret settings of the type, defaults filled in'),
    secrets: z.record(z.string(), z.string()).describe('Per secret field that is set, a hint ("set", or a few characters around an ellipsis); never the value'),
    status: z.object({
      last_attempt_at: timestampSchema.nullable(),
      last_delivered_at: timestampSchema.nullable(),
      last_error: z.string().nullable().describe('Why the last try failed; null after a delivery'),
      failing_since: timestampSchema.nullable().describe('First failure since the last delivery'),
      pending: z.number().int().describe('Notifications waiting in the outbox for this channel (not delivered, not given up)'),
    }),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'NotificationChannel' });

export const deliveryOutcomeSchema = z
  .object({
    delivered: z.boolean(),
    status_code: z.number().int().nullable().describe("The receiver's HTTP status (email: the SMTP reply code); null when none came"),
    error: z.string().nullable().describe('Why it was not delivered; null when delivered'),
    answer: z.string().nullable().describe("The start of the receiver's answer (at most 500 characters)"),
  })
  .meta({ id: 'DeliveryOutcome' });

export const channelDto = (c: Channel): z.infer<typeof channelSchema> => ({
  id: c.id,
  name: c.name,
  type: c.type,
  customer_id: c.customer_id,
  enabled: c.enabled,
  settings: c.settings,
  secrets: c.secret_hints,
  status: {
    last_attempt_at: toTimestamp(c.last_attempt_at),
    last_delivered_at: toTimestamp(c.last_delivered_at),
    last_error: c.last_error,
    failing_since: toTimestamp(c.failing_since),
    pending: Number(c.pending),
  },
  created_at: toTimestamp(c.created_at),
  updated_at: toTimestamp(c.updated_at),
});
