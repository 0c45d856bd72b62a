// User request and response shapes (contract §1). Hashes and TOTP secrets never leave the server.
import { z } from 'zod';
import { timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import { allByDefault, pageQuery } from '../../http/pagination.js';
import { passwordSchema } from './passwords.js';
import type { User } from './users.service.js';

export const usernameSchema = z
  .string()
  .regex(/^[A-Za-z0-9._@-]{1,64}$/, 'must be 1-64 characters of A-Z, a-z, 0-9, ".", "_", "@", "-"');

export const userRoleSchema = z
  .enum(['read', 'write', 'admin'])
  .describe('read: looks only; write: also changes (commands, tasks, backups, keys up to write); admin: also users, settings and the server terminal');

const customerIdsSchema = z
  .array(z.number().int().min(1).max(2147483647))
  .max(1000)
  .nullable()
  .describe('The customers the user is limited to (everything else is 404 for them); null: every customer');

export const createUserBody = z.object({
  username: usernameSchema,
  password: passwordSchema,
  role: userRoleSchema.default('admin').describe('Default admin, as every user was before roles existed'),
  customer_ids: customerIdsSchema.default(null),
});

export const updateUserBody = z
  .object({ role: userRoleSchema.optional(), customer_ids: customerIdsSchema.optional() })
  .refine((b) => b.role !== undefined || b.customer_ids !== undefined, 'give role, customer_ids or both');
export const setPasswordBody = z.object({ password: passwordSchema });

export const USER_LIST = allByDefault('by username ignoring case');
export const userListQuery = z.object(pageQuery(USER_LIST));

export const userSchema = z
  .object({
    id: z.number().int(),
    username: z.string(),
    totp_enabled: z.boolean(),
    created_at: timestampSchema,
    last_login_at: timestampSchema.nullable(),
    role: userRoleSchema,
    customer_ids: z.array(z.number().int()).nullable().describe('The customers the user is limited to; null: every customer'),
  })
  .meta({ id: 'User' });

export function toUserDto(u: User): z.infer<typeof userSchema> {
  return {
    id: u.id,
    username: u.username,
    totp_enabled: u.totp_enabled,
    created_at: toTimestamp(u.created_at),
    last_login_at: toTimestamp(u.last_login_at),
    role: u.role,
    customer_ids: u.all_customers ? null : u.customer_ids,
  };
}
