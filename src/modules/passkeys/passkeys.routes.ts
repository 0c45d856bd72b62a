// /auth/passkeys and the passkey sign-in routes. Ceremonies are bound to the browser's origin: options
// are given only to a request whose Origin is this server's own (PUBLIC_URL's) or in ALLOWED_ORIGINS,
// and the RP ID is that origin's host name (relying-party.ts). New passkeys are made only once PUBLIC_URL
// is set: without it the server's own origin would come from the Host header, which whoever sends the
// request chooses (issue 57), and a passkey is bound to its RP ID for good.
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { noteAudit } from '../../http/audit-recorder.js';
import { idParams, okSchema } from '../../http/common-schemas.js';
import { AppError } from '../../platform/errors.js';
import { clientOf, tokenBody } from '../auth/auth.routes.js';
import { tokenResponse } from '../auth/auth.schemas.js';
import type { PasskeySignIn } from './passkey-sign-in.js';
import { MAX_PASSKEYS_PER_USER, type PasskeyService } from './passkeys.service.js';
import * as s from './passkeys.schemas.js';
import { relyingPartyOf } from './relying-party.js';

const tags = ['auth'];

const ORIGIN_RULE =
  'Needs a browser `Origin` header that is this server\'s own origin (PUBLIC_URL\'s; unset: the scheme and host the request came to) or one in ALLOWED_ORIGINS, else 403 FORBIDDEN; ' +
  "the RP ID is that origin's host name (an IP address is refused: browsers do not accept one as RP ID). The challenge is single-use and expires after 5 minutes.";

/** Why passkeys cannot be registered without PUBLIC_URL; the account page shows it. */
export const NEEDS_PUBLIC_URL =
  'Passkeys cannot be added until the server\'s PUBLIC_URL is set (the console\'s address, e.g. https://rmm.example.net): ' +
  'a passkey is bound to that host name, which the server must not take from the request. Ask the administrator to set it and restart the server.';

function userIdOf(request: FastifyRequest): number {
  const caller = callerOf(request);
  if (caller.kind !== 'user') throw new AppError('FORBIDDEN', 'Only signed-in users may do this');
  return caller.userId;
}

export const passkeyRoutes: FastifyPluginAsyncZod<{ passkeys: PasskeyService; signIn: PasskeySignIn; allowedOrigins: readonly string[]; publicUrl: string | undefined }> = async (
  app,
  { passkeys, signIn, allowedOrigins, publicUrl },
) => {
  const rpOf = (request: FastifyRequest) => relyingPartyOf({ origin: request.headers.origin, protocol: request.protocol, host: request.host }, allowedOrigins, publicUrl);

  app.get(
    '/auth/passkeys',
    {
      config: { access: 'user' },
      schema: { summary: "The signed-in user's passkeys", description: `Oldest first. Not paged: at most ${MAX_PASSKEYS_PER_USER} per user.`, tags, response: { 200: z.array(s.passkeySchema) } },
    },
    async (request) => (await passkeys.list(userIdOf(request))).map(s.toPasskeyDto),
  );

  app.get(
    '/auth/passkeys/registration',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Whether passkeys can be added on this server',
        description: 'For the account page: `available` is false while PUBLIC_URL is unset, and `reason` says so.',
        tags,
        response: { 200: s.registrationStatus },
      },
    },
    async () => (publicUrl ? { available: true, reason: null } : { available: false, reason: NEEDS_PUBLIC_URL }),
  );

  app.post(
    '/auth/passkeys/registration-options',
    {
      config: { access: 'user', audit: 'auth.passkey_registration_started' },
      schema: {
        summary: 'Start registering a passkey: options for navigator.credentials.create()',
        description:
          `Pass the answer to @simplewebauthn/browser startRegistration(), then POST its result to /auth/passkeys. Existing passkeys are excluded; 409 at ${MAX_PASSKEYS_PER_USER}. ` +
          `409 CONFLICT while PUBLIC_URL is unset (the RP ID must not come from the Host header). ${ORIGIN_RULE}`,
        tags,
        body: z.object({}).optional(),
        response: { 200: s.creationOptions },
      },
    },
    async (request) => {
      const userId = userIdOf(request);
      if (!publicUrl) throw new AppError('CONFLICT', NEEDS_PUBLIC_URL);
      return s.asCreationOptions(await passkeys.registrationOptions(userId, rpOf(request), request.ip));
    },
  );

  app.post(
    '/auth/passkeys',
    {
      config: { access: 'user', audit: 'auth.passkey_added' },
      schema: {
        summary: 'Register a passkey with the browser\'s answer to the registration options',
        description:
          'From now on a password sign-in of this user asks for a passkey or the TOTP code. 401 INVALID_CREDENTIALS when the answer does not verify or its challenge expired or was used; 409 when the passkey is already registered.',
        tags,
        body: s.registerBody,
        response: { 201: s.passkeySchema },
      },
    },
    async (request, reply) => {
      const row = await passkeys.register(userIdOf(request), request.body.name, request.body.response);
      return reply.code(201).send(s.toPasskeyDto(row));
    },
  );

  app.patch(
    '/auth/passkeys/:id',
    {
      config: { access: 'user', audit: 'auth.passkey_renamed' },
      schema: { summary: 'Rename one of your passkeys', description: '404 for a passkey that is not yours.', tags, params: idParams, body: s.renameBody, response: { 200: s.passkeySchema } },
    },
    async (request) => s.toPasskeyDto(await passkeys.rename(userIdOf(request), request.params.id, request.body.name)),
  );

  app.delete(
    '/auth/passkeys/:id',
    {
      config: { access: 'user', audit: 'auth.passkey_deleted' },
      schema: { summary: 'Delete one of your passkeys', description: '404 for a passkey that is not yours. With the last one gone, sign-in no longer asks for a passkey.', tags, params: idParams, response: { 200: okSchema } },
    },
    async (request) => {
      await passkeys.remove(userIdOf(request), request.params.id);
      return { ok: true as const };
    },
  );

  app.post(
    '/auth/2fa/passkey-options',
    {
      config: { access: 'public' },
      schema: {
        summary: 'Second sign-in step with a passkey: options for navigator.credentials.get()',
        description: `For a pending login whose \`methods\` include \`passkey\`; limited to that user's passkeys. 401 for an invalid pending token. ${ORIGIN_RULE}`,
        tags,
        body: s.pendingBody,
        response: { 200: s.requestOptions },
      },
    },
    async (request) => s.asRequestOptions(await signIn.secondStepOptions(request.body.pending_token, rpOf(request), request.ip)),
  );

  app.post(
    '/auth/2fa/passkey',
    {
      config: { access: 'public' },
      schema: {
        summary: 'Second sign-in step: pending token + passkey answer → access token',
        description: 'A wrong or replayed answer is 401 INVALID_CREDENTIALS and counts as one of the pending login\'s 5 wrong tries.',
        tags,
        body: s.secondStepBody,
        response: { 200: tokenResponse },
      },
    },
    async (request) => {
      const username = signIn.pendingUsername(request.body.pending_token);
      if (username) noteAudit(request, { actor_type: 'user', actor: username, action: 'auth.2fa_failed' });
      const result = await signIn.secondStep(request.body.pending_token, request.body.response, clientOf(request));
      noteAudit(request, { actor_type: 'user', actor: result.user.username, action: 'auth.login' });
      return tokenBody(result);
    },
  );

  app.get(
    '/auth/passkey-login',
    {
      config: { access: 'public' },
      schema: {
        summary: 'Whether sign-in with a passkey alone is offered',
        description: 'For the sign-in page: shows "Sign in with a passkey" when true (setting passwordless_login).',
        tags,
        response: { 200: s.passwordlessStatus },
      },
    },
    async () => ({ passwordless_login: await signIn.passwordlessEnabled() }),
  );

  app.post(
    '/auth/passkey-options',
    {
      config: { access: 'public' },
      schema: {
        summary: 'Sign-in with a passkey alone: options for navigator.credentials.get()',
        description: `403 FORBIDDEN unless the setting passwordless_login is on. No allow list: the browser offers the passkeys it holds for this site; user verification is required. At most 20 open requests per address: 429 beyond. ${ORIGIN_RULE}`,
        tags,
        body: z.object({}).optional(),
        response: { 200: s.requestOptions },
      },
    },
    async (request) => s.asRequestOptions(await signIn.passwordlessOptions(rpOf(request), request.ip)),
  );

  app.post(
    '/auth/passkey-login',
    {
      config: { access: 'public' },
      schema: {
        summary: 'Sign in with a passkey alone → access token',
        description: 'The answer to /auth/passkey-options. A passkey that verified the user is both factors: no second step. 401 INVALID_CREDENTIALS for any answer that does not verify; 403 while passwordless_login is off.',
        tags,
        body: s.passwordlessBody,
        response: { 200: tokenResponse },
      },
    },
    async (request) => {
      noteAudit(request, { actor_type: 'user', actor: '(passkey)', action: 'auth.login_failed' });
      const result = await signIn.passwordless(request.body.response, clientOf(request));
      noteAudit(request, { actor_type: 'user', actor: result.user.username, action: 'auth.login' });
      return tokenBody(result);
    },
  );
};
