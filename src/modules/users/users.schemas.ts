// User request and response shapes (contract §1). Hashes and TOTP secrets never leave the server.
import { z } from 'zod';
import { timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import { allByDefault, pageQuery } from '../../http/pagination.js';
import { passwordSchema } from './passwords.js';
import type { User } from './users.service.js';

export const usernameSchema = z
  .string()
  .regex(/^[A-Za-z0-9._@-]{1,64}$/, 'must be 1-64 characters of A-Z, a-z, 0-9, ".", "_", "@", "-"');

export const createUserBody = z.object({ username: usernameSchema, password: passwordSchema });
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
  })
  .meta({ id: 'User' });

export function toUserDto(u: User): z.infer<typeof userSchema> {
  return {
    id: u.id,
    username: u.username,
    totp_enabled: u.totp_enabled,
    created_at: toTimestamp(u.created_at),
    last_login_at: toTimestamp(u.last_login_at),
  };
}
