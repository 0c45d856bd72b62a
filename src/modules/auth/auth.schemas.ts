// Sign-in request and response shapes (contract §1).
import { z } from 'zod';
import { timestampSchema } from '../../http/common-schemas.js';
import { permissionSchema } from '../api-keys/api-keys.schemas.js';
import { userSchema } from '../users/users.schemas.js';

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
    pending_token: z.string().describe('Exchange with a TOTP code at /auth/2fa/validate within 5 minutes'),
    expires_at: timestampSchema,
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
  z.object({ id: z.number().int(), username: z.string(), totp_enabled: z.boolean(), created_at: timestampSchema }),
  z.object({
    api_key: z.object({
      id: z.number().int(),
      name: z.string(),
      permissions: permissionSchema,
      customer_id: z.number().int().nullable(),
    }),
  }),
]);
