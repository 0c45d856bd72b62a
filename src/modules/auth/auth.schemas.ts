// Sign-in request and response shapes (contract §1).
import { z } from 'zod';
import { timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import { permissionSchema } from '../api-keys/api-keys.schemas.js';
import { userRoleSchema, userSchema } from '../users/users.schemas.js';
import type { SessionRow } from './sessions.repo.js';

export const loginBody = z.object({
  username: z.string().min(1).max(200),
  password: z.string().max(1024),
});

export const tokenResponse = z
  .object({
    token: z.string().describe('JWT (HS256), valid 8 hours; send as Authorization: Bearer <token>'),
    token_type: z.literal('Bearer'),
    expires_at: timestampSchema,
    user: userSchema,
  })
  .meta({ id: 'AccessToken' });

export const pendingResponse = z
  .object({
    totp_required: z.literal(true),
    pending_token: z.string().describe('Exchange with a TOTP code at /auth/2fa/validate (or a passkey) within 5 minutes'),
    expires_at: timestampSchema,
    methods: z.array(z.enum(['totp', 'passkey'])).describe('The second factors this user has; any one completes the sign-in'),
  })
  .meta({ id: 'PendingLogin' });

export const validateBody = z.object({ pending_token: z.string().min(1).max(4096), code: z.string().max(16) });
export const codeBody = z.object({ code: z.string().max(16) });
export const disableBody = z.object({ password: z.string().max(1024), code: z.string().max(16) });
export const emptyBody = z.object({}).optional();

export const setupResponse = z.object({
  secret: z.string().describe('Base32 TOTP secret; not active until confirmed'),
  otpauth_url: z.string().describe('otpauth:// URI for authenticator apps (QR code)'),
});

export const meResponse = z.union([
  z.object({
    id: z.number().int(),
    username: z.string(),
    totp_enabled: z.boolean(),
    created_at: timestampSchema,
    role: userRoleSchema,
    customer_ids: z.array(z.number().int()).nullable().describe('The customers the user is limited to; null: every customer'),
    session_id: z.string().nullable().describe('The session of this token (see GET /auth/sessions)'),
  }),
  z.object({
    api_key: z.object({
      id: z.number().int(),
      name: z.string(),
      permissions: permissionSchema,
      customer_id: z.number().int().nullable(),
    }),
  }),
]);

export const sessionParams = z.object({ session_id: z.string().min(1).max(64) });

export const sessionSchema = z
  .object({
    id: z.string(),
    method: z.string().describe('How it began: password, totp, passkey, sso'),
    ip: z.string(),
    user_agent: z.string(),
    created_at: timestampSchema,
    last_used_at: timestampSchema,
    expires_at: timestampSchema,
    current: z.boolean().describe('The session of the token making this request'),
  })
  .meta({ id: 'Session' });

export function toSessionDto(row: SessionRow, currentId: string | undefined): z.infer<typeof sessionSchema> {
  return {
    id: row.id,
    method: row.method,
    ip: row.ip,
    user_agent: row.user_agent,
    created_at: toTimestamp(row.created_at),
    last_used_at: toTimestamp(row.last_used_at),
    expires_at: toTimestamp(row.expires_at),
    current: row.id === currentId,
  };
}
