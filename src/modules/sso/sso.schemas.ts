// Single sign-on request and response shapes. The client secret goes in and never comes out: answers
// carry only its hint.
import { z } from 'zod';
import { timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import { userRoleSchema } from '../users/users.schemas.js';
import type { ProviderRow } from './sso.repo.js';

const customerIds = z
  .array(z.number().int().min(1).max(2147483647))
  .max(1000)
  .nullable()
  .describe('Customers the user is limited to; null: every customer; []: none until an admin adds some');

const claimName = z.string().trim().min(1).max(100).regex(/^[A-Za-z0-9_.:/-]+$/, 'must be a claim name like preferred_username, email or groups');

// Scope tokens as RFC 6749 §3.3 allows them; openid is what makes it a sign-in.
const scopes = z
  .string()
  .trim()
  .max(500)
  .regex(/^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/, 'must be scope names separated by single spaces')
  .refine((v) => v.split(' ').includes('openid'), 'must include openid');

export const mappingSchema = z.object({
  value: z.string().min(1).max(200).describe('A value of the role claim, e.g. a group id or an app role'),
  role: userRoleSchema,
  customer_ids: customerIds,
});

const providerFields = {
  name: z.string().trim().min(1).max(100).describe('Shown on the sign-in button: "Sign in with <name>"'),
  issuer: z.string().trim().max(2048).describe('The provider\'s issuer URL (its /.well-known/openid-configuration is read); https, or http on localhost only'),
  client_id: z.string().trim().min(1).max(500),
  client_secret: z.string().min(1).max(2000).describe('Stored encrypted; answered only as a hint'),
  scopes: scopes.describe('Space-separated; must include openid'),
  username_claim: claimName.describe('The claim that names the user (preferred_username, email, …)'),
  role_claim: claimName.nullable().describe('The claim whose values the mappings match (groups, roles, …); null: everyone gets the defaults'),
  mappings: z.array(mappingSchema).max(100).describe('Checked in order; the first whose value the role claim holds gives the role and customers of a new user'),
  default_role: userRoleSchema.describe('The role of a new user no mapping matched'),
  default_customer_ids: customerIds,
  auto_create: z.boolean().describe('Create a user on the first sign-in of someone not yet known; off: only already linked users sign in'),
  enabled: z.boolean().describe('Shown on the sign-in page and usable'),
};

export const createProviderBody = z.object({
  ...providerFields,
  scopes: providerFields.scopes.default('openid profile email'),
  username_claim: providerFields.username_claim.default('preferred_username'),
  role_claim: providerFields.role_claim.default(null),
  mappings: providerFields.mappings.default([]),
  default_role: providerFields.default_role.default('read'),
  default_customer_ids: customerIds.default([]),
  auto_create: providerFields.auto_create.default(false),
  enabled: providerFields.enabled.default(true),
});

export const updateProviderBody = z
  .object(providerFields)
  .partial()
  .strict()
  .describe('Only the fields given change; leave out client_secret to keep it');

export const providerSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    issuer: z.string(),
    client_id: z.string(),
    client_secret_hint: z.string().describe('The last characters of the stored secret'),
    scopes: z.string(),
    username_claim: z.string(),
    role_claim: z.string().nullable(),
    mappings: z.array(mappingSchema),
    default_role: userRoleSchema,
    default_customer_ids: z.array(z.number().int()).nullable(),
    auto_create: z.boolean(),
    enabled: z.boolean(),
    redirect_uri: z.string().describe('Register this redirect URI at the provider'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'SsoProvider' });

export const publicProviderSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  start_url: z.string().describe('Open this in the browser to sign in (it sends the browser to the provider)'),
});

export const passwordLoginSchema = z.object({
  password_login: z
    .enum(['everyone', 'admins_only'])
    .describe('admins_only: users without the admin role must use single sign-on (their password sign-in is 403)'),
});

export const exchangeBody = z.object({ ticket: z.string().min(1).max(200) });

/** What a provider may send back to the redirect URI (anything else is ignored). */
export const callbackQuery = z.object({
  code: z.string().max(4096).optional(),
  state: z.string().max(512).optional(),
  iss: z.string().max(2048).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(2000).optional(),
  session_state: z.string().max(512).optional(),
});

export function secretHint(secret: string): string {
  return secret.length >= 12 ? `…${secret.slice(-4)}` : '…';
}

export function toProviderDto(row: ProviderRow, secret: string, redirectUri: string): z.infer<typeof providerSchema> {
  return {
    id: row.id,
    name: row.name,
    issuer: row.issuer,
    client_id: row.client_id,
    client_secret_hint: secretHint(secret),
    scopes: row.scopes,
    username_claim: row.username_claim,
    role_claim: row.role_claim,
    mappings: row.mappings,
    default_role: row.default_role,
    default_customer_ids: row.default_customer_ids,
    auto_create: row.auto_create,
    enabled: row.enabled,
    redirect_uri: redirectUri,
    created_at: toTimestamp(row.created_at),
    updated_at: toTimestamp(row.updated_at),
  };
}
