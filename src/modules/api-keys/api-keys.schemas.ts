// API key request and response shapes (contract §1). The key itself appears only in the create response.
import { z } from 'zod';
import { idRefSchema, timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import { allByDefault, pageQuery } from '../../http/pagination.js';
import type { ApiKey } from './api-keys.service.js';

export const permissionSchema = z.enum(['agent', 'read', 'write', 'admin']).describe('agent < read < write < admin');

export const createApiKeyBody = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(100),
  permissions: permissionSchema,
  customer_id: idRefSchema.nullable().optional().describe('Scope the key to one customer'),
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
  })
  .meta({ id: 'ApiKey' });

export const createdApiKeySchema = apiKeySchema
  .extend({ key: z.string().describe('The key itself: shown only in this response, store it now') })
  .meta({ id: 'CreatedApiKey' });

export function toApiKeyDto(k: ApiKey): z.infer<typeof apiKeySchema> {
  return {
    id: k.id,
    name: k.name,
    key_hint: k.key_hint,
    permissions: k.permissions,
    customer_id: k.customer_id,
    created_at: toTimestamp(k.created_at),
  };
}
