// API key request and response shapes (contract §1). The key itself appears only in the create response.
import { z } from 'zod';
import { idRefSchema, timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import { allByDefault, pageQuery } from '../../http/pagination.js';
import { keyExpiry, type ApiKey } from './api-keys.service.js';

export const permissionSchema = z.enum(['agent', 'read', 'write', 'admin']).describe('agent < read < write < admin');

export const createApiKeyBody = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(100),
  permissions: permissionSchema,
  customer_id: idRefSchema.nullable().optional().describe('Scope the key to one customer'),
  expires_at: timestampSchema
    .nullable()
    .optional()
    .describe('Enrollment keys: the key stops working at this time (must be in the future; 400 otherwise). Absent or null: never'),
  max_uses: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .nullable()
    .optional()
    .describe('Enrollment keys: installs the key may make (an install script or installer package downloaded with it); then it stops working. Absent or null: unlimited'),
});

export const API_KEY_LIST = allByDefault('by id (oldest first)');
export const apiKeyListQuery = z.object(pageQuery(API_KEY_LIST));

export const apiKeySchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    key_hint: z.string().describe('First 8 characters, an ellipsis, the last 4'),
    permissions: permissionSchema,
    customer_id: z.number().int().nullable(),
    created_at: timestampSchema,
    expires_at: timestampSchema.nullable().describe('When it stops working; null: never'),
    max_uses: z.number().int().nullable().describe('Installs it may make; null: unlimited'),
    uses: z.number().int().describe('Installs made with it (install scripts and installer packages downloaded)'),
    expired: z.boolean().describe('Past expires_at or used up: every request with it answers 401'),
  })
  .meta({ id: 'ApiKey' });

export const createdApiKeySchema = apiKeySchema
  .extend({ key: z.string().describe('The key itself: shown only in this response, store it now') })
  .meta({ id: 'CreatedApiKey' });

export function toApiKeyDto(k: ApiKey, now: Date = new Date()): z.infer<typeof apiKeySchema> {
  return {
    id: k.id,
    name: k.name,
    key_hint: k.key_hint,
    permissions: k.permissions,
    customer_id: k.customer_id,
    created_at: toTimestamp(k.created_at),
    expires_at: toTimestamp(k.expires_at),
    max_uses: k.max_uses,
    uses: k.uses,
    expired: keyExpiry(k, now) !== null,
  };
}
