// Request and response shapes of passkeys. The browser's credential answers are checked only for shape
// and size here (every field bounded, so a hostile body cannot be large); @simplewebauthn/server checks
// what they mean.
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { z } from 'zod';
import { timestampSchema, toTimestamp, withoutNul } from '../../http/common-schemas.js';
import type { PasskeyRow } from './passkeys.repo.js';

const b64url = (max: number) => z.string().min(1).max(max).regex(/^[A-Za-z0-9_-]+$/, 'must be base64url');

const transports = z.array(z.enum(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb'])).max(8);
const common = {
  id: b64url(1400),
  rawId: b64url(1400),
  type: z.literal('public-key'),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
  clientExtensionResults: z.record(z.string(), z.unknown()).optional().default({}),
};

export const registrationResponse = z
  .object({
    ...common,
    response: z.object({
      clientDataJSON: b64url(4096),
      // With attestation "none" this is small; 32 KB leaves room for an authenticator's certificates.
      attestationObject: b64url(32_768),
      transports: transports.optional(),
      authenticatorData: b64url(32_768).optional(),
      publicKey: b64url(4096).optional(),
      publicKeyAlgorithm: z.number().int().optional(),
    }),
  })
  .describe('What @simplewebauthn/browser startRegistration() returns');

export const authenticationResponse = z
  .object({
    ...common,
    response: z.object({
      clientDataJSON: b64url(4096),
      authenticatorData: b64url(4096),
      signature: b64url(2048),
      userHandle: b64url(128).optional(),
    }),
  })
  .describe('What @simplewebauthn/browser startAuthentication() returns');

export const passkeyName = withoutNul(z.string().trim().min(1).max(100));

export const passkeySchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    created_at: timestampSchema,
    last_used_at: timestampSchema.nullable(),
  })
  .meta({ id: 'Passkey' });

export const registerBody = z.object({ name: passkeyName, response: registrationResponse });
export const renameBody = z.object({ name: passkeyName });
export const pendingBody = z.object({ pending_token: z.string().min(1).max(4096) });
export const secondStepBody = z.object({ pending_token: z.string().min(1).max(4096), response: authenticationResponse });
export const passwordlessBody = z.object({ response: authenticationResponse });

// Options for navigator.credentials.create/get as JSON, passed to @simplewebauthn/browser as they are.
// Loose objects: the serializer keeps fields the library adds (extensions, hints) that are not listed.
const credentialDescriptor = z.object({ id: z.string(), type: z.literal('public-key'), transports: z.array(z.string()).optional() });

export const creationOptions = z
  .looseObject({
    challenge: z.string(),
    rp: z.object({ name: z.string(), id: z.string().optional() }),
    user: z.object({ id: z.string(), name: z.string(), displayName: z.string() }),
    pubKeyCredParams: z.array(z.object({ alg: z.number(), type: z.literal('public-key') })),
    timeout: z.number().optional(),
    excludeCredentials: z.array(credentialDescriptor).optional(),
    authenticatorSelection: z.looseObject({}).optional(),
    attestation: z.string().optional(),
  })
  .meta({ id: 'PasskeyCreationOptions' })
  .describe('PublicKeyCredentialCreationOptionsJSON: give to startRegistration({ optionsJSON })');

export const requestOptions = z
  .looseObject({
    challenge: z.string(),
    rpId: z.string().optional(),
    timeout: z.number().optional(),
    allowCredentials: z.array(credentialDescriptor).optional(),
    userVerification: z.enum(['required', 'preferred', 'discouraged']).optional(),
  })
  .meta({ id: 'PasskeyRequestOptions' })
  .describe('PublicKeyCredentialRequestOptionsJSON: give to startAuthentication({ optionsJSON })');

/**
 * The library's option types and these schemas describe the same JSON in different words (its types
 * have no index signature, its transports are a union); the serializer checks the real value against
 * the schema on the way out.
 */
export const asCreationOptions = (options: PublicKeyCredentialCreationOptionsJSON) => options as unknown as z.infer<typeof creationOptions>;
export const asRequestOptions = (options: PublicKeyCredentialRequestOptionsJSON) => options as unknown as z.infer<typeof requestOptions>;

export const passwordlessStatus = z.object({
  passwordless_login: z.boolean().describe('Whether the sign-in page may offer "Sign in with a passkey" (no username or password)'),
});

export function toPasskeyDto(row: PasskeyRow): z.infer<typeof passkeySchema> {
  return { id: row.id, name: row.name, created_at: toTimestamp(row.created_at), last_used_at: toTimestamp(row.last_used_at) };
}

export const registrationStatus = z
  .object({
    available: z.boolean().describe('Whether passkeys can be added (PUBLIC_URL is set)'),
    reason: z.string().nullable().describe('Why not, for the account page; null when available'),
  })
  .meta({ id: 'PasskeyRegistrationStatus' });
