// /auth: login, the TOTP second step, TOTP enrolment, logout and "who am I".
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { noteAudit } from '../../http/audit-recorder.js';
import { okSchema, toTimestamp } from '../../http/common-schemas.js';
import { AppError } from '../../platform/errors.js';
import { actorOf } from './caller.js';
import { toUserDto } from '../users/users.schemas.js';
import type { AuthService, ClientInfo, LoginResult } from './auth.service.js';
import * as s from './auth.schemas.js';

const tags = ['auth'];

/** A completed sign-in as the API answers it (password, TOTP, passkey, single sign-on). */
export function tokenBody(result: LoginResult & { kind: 'token' }) {
  return {
    token: result.token,
    token_type: 'Bearer' as const,
    expires_at: toTimestamp(result.expiresAt),
    user: toUserDto(result.user),
  };
}

function userIdOf(request: Parameters<typeof callerOf>[0]): number {
  return signedInUser(request).userId;
}

function signedInUser(request: Parameters<typeof callerOf>[0]) {
  const caller = callerOf(request);
  if (caller.kind !== 'user') throw new AppError('FORBIDDEN', 'Only signed-in users may do this');
  return caller;
}

/** The device a sign-in comes from, as its session shows it. */
export function clientOf(request: FastifyRequest): ClientInfo {
  const agent = request.headers['user-agent'];
  return { ip: request.ip, userAgent: typeof agent === 'string' ? agent : '' };
}

/** A pending login as the API answers it. */
export function pendingBody(result: LoginResult & { kind: 'pending' }) {
  return {
    totp_required: true as const,
    pending_token: result.pendingToken,
    expires_at: toTimestamp(result.expiresAt),
    methods: result.methods,
  };
}

export const authRoutes: FastifyPluginAsyncZod<{ auth: AuthService }> = async (app, { auth }) => {
  app.post(
    '/auth/login',
    {
      config: { access: 'public' },
      schema: {
        summary: 'Sign in with username and password',
        description:
          'Returns an access token, or, when the user has TOTP enabled, a pending token for /auth/2fa/validate. ' +
          'Wrong username and wrong password give the same 401 INVALID_CREDENTIALS. Failures are counted per ' +
          'username and address (10), per address over all usernames (50) and per username (100; not for an ' +
          'address the user signed in from in the last 90 days); past a count: 429 TOO_MANY_ATTEMPTS with ' +
          'Retry-After, a wait that doubles with each further failure (1 minute up to an hour). The right ' +
          'password starts the username-and-address count again. Passkey and single sign-on are not throttled by it.',
        tags,
        body: s.loginBody,
        response: { 200: z.union([s.tokenResponse, s.pendingResponse]) },
      },
    },
    async (request) => {
      const { username, password } = request.body;
      noteAudit(request, { actor_type: 'user', actor: username, action: 'auth.login_failed' });
      const result = await auth.login(username, password, clientOf(request));
      if (result.kind === 'pending') {
        noteAudit(request, { actor_type: 'user', actor: username, action: 'auth.login_pending_2fa' });
        return pendingBody(result);
      }
      noteAudit(request, { actor_type: 'user', actor: result.user.username, action: 'auth.login' });
      return tokenBody(result);
    },
  );

  app.post(
    '/auth/2fa/validate',
    {
      config: { access: 'public' },
      schema: {
        summary: 'Second sign-in step: pending token + TOTP code → access token',
        description: 'A pending token is single-use, valid 5 minutes, and allows at most 5 wrong codes.',
        tags,
        body: s.validateBody,
        response: { 200: s.tokenResponse },
      },
    },
    async (request) => {
      const username = auth.pendingUsername(request.body.pending_token);
      if (username) noteAudit(request, { actor_type: 'user', actor: username, action: 'auth.2fa_failed' });
      const result = await auth.validateTwoFactor(request.body.pending_token, request.body.code, clientOf(request));
      noteAudit(request, { actor_type: 'user', actor: result.user.username, action: 'auth.login' });
      return tokenBody(result);
    },
  );

  app.post(
    '/auth/2fa/setup',
    {
      config: { access: 'user', audit: 'auth.2fa_setup' },
      schema: { summary: 'Start TOTP enrolment (not active until confirmed)', tags, body: s.emptyBody, response: { 200: s.setupResponse } },
    },
    async (request) => auth.setupTwoFactor(userIdOf(request)),
  );

  app.post(
    '/auth/2fa/confirm',
    {
      config: { access: 'user', audit: 'auth.2fa_enabled' },
      schema: {
        summary: 'Confirm enrolment with a current code; TOTP is enabled from now on',
        tags,
        body: s.codeBody,
        response: { 200: z.object({ totp_enabled: z.literal(true) }) },
      },
    },
    async (request) => {
      // A wrong code enables nothing: its entry must not read "enabled" (the status alone said 401).
      noteAudit(request, { ...actorOf(callerOf(request)), action: 'auth.2fa_enable_failed' });
      await auth.confirmTwoFactor(userIdOf(request), request.body.code);
      noteAudit(request, { ...actorOf(callerOf(request)), action: 'auth.2fa_enabled' });
      return { totp_enabled: true as const };
    },
  );

  app.post(
    '/auth/2fa/disable',
    {
      config: { access: 'user', audit: 'auth.2fa_disabled' },
      schema: {
        summary: 'Disable TOTP with password and a current code; ends all sessions of the user',
        tags,
        body: s.disableBody,
        response: { 200: z.object({ totp_enabled: z.literal(false) }) },
      },
    },
    async (request) => {
      await auth.disableTwoFactor(userIdOf(request), request.body.password, request.body.code);
      return { totp_enabled: false as const };
    },
  );

  app.post(
    '/auth/logout',
    {
      config: { access: 'user', audit: 'auth.logout' },
      schema: { summary: "Sign out everywhere: end all of this user's sessions (older tokens stop working)", tags, body: s.emptyBody, response: { 200: okSchema } },
    },
    async (request) => {
      await auth.logout(userIdOf(request));
      return { ok: true as const };
    },
  );

  app.get(
    '/auth/sessions',
    {
      config: { access: 'user' },
      schema: {
        summary: "The signed-in user's active sessions (device, address, last use)",
        description: '`current` marks the session of the token making this request. Last use is updated at most once a minute. Not paged: one per sign-in, gone when it ends or expires (8 hours).',
        tags,
        response: { 200: z.array(s.sessionSchema) },
      },
    },
    async (request) => {
      const caller = signedInUser(request);
      return (await auth.listSessions(caller.userId)).map((row) => s.toSessionDto(row, caller.sessionId));
    },
  );

  app.delete(
    '/auth/sessions/:session_id',
    {
      config: { access: 'user', audit: 'auth.session_end' },
      schema: {
        summary: 'End one of your sessions (your current one signs you out here)',
        tags,
        params: s.sessionParams,
        response: { 200: okSchema },
      },
    },
    async (request) => {
      await auth.endSession(userIdOf(request), request.params.session_id);
      return { ok: true as const };
    },
  );

  app.get(
    '/auth/me',
    {
      config: { access: 'read' },
      schema: { summary: 'The signed-in user, or the API key in use', tags, response: { 200: s.meResponse } },
    },
    async (request) => {
      const caller = callerOf(request);
      if (caller.kind === 'api_key') {
        return { api_key: { id: caller.keyId, name: caller.name, permissions: caller.permission, customer_id: caller.customerId } };
      }
      const user = await auth.requireUser(caller.userId);
      return {
        id: user.id,
        username: user.username,
        totp_enabled: user.totp_enabled,
        created_at: toTimestamp(user.created_at),
        role: caller.role,
        customer_ids: caller.customerIds === null ? null : [...caller.customerIds],
        session_id: caller.sessionId ?? null,
      };
    },
  );
};
