// /auth/sso: the public half of single sign-on, which the sign-in page uses. The browser goes to
// `start` (a link), the provider sends it back to `callback`, which answers with a redirect to the
// console carrying either a one-time ticket or a message, both in the URL's fragment (never sent to a
// server, nor in a Referer); the console trades the ticket at `exchange`. A cookie set at the start,
// only for these paths, ties the callback and the exchange to the browser that began the sign-in, so
// nobody can make someone else's browser finish a sign-in they started (login CSRF).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { noteAudit } from '../../http/audit-recorder.js';
import { idParams } from '../../http/common-schemas.js';
import type { Logger } from '../../platform/logger.js';
import { clientOf, pendingBody, tokenBody } from '../auth/auth.routes.js';
import { pendingResponse, tokenResponse } from '../auth/auth.schemas.js';
import { consoleOrigin } from './console-origin.js';
import { SsoRefusal, type SsoLoginService } from './sso-login.service.js';
import { callbackQuery, exchangeBody, publicProviderSchema } from './sso.schemas.js';

const tags = ['auth'];
const COOKIE = 'rmm_sso';
const COOKIE_PATH = '/api/v1/auth/sso';
const COOKIE_SECONDS = 10 * 60;

function browserSecretOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie ?? '';
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === COOKIE) return rest.join('=') || undefined;
  }
  return undefined;
}

function setBrowserCookie(request: FastifyRequest, reply: FastifyReply, value: string, seconds: number): void {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  // Lax: sent when the provider navigates the browser back here (a top-level GET), not on cross-site posts.
  reply.header('set-cookie', `${COOKIE}=${value}; Path=${COOKIE_PATH}; Max-Age=${seconds}; HttpOnly; SameSite=Lax${secure}`);
}

/** Back to the console's sign-in page with a ticket or a message in the fragment. */
function backToConsole(reply: FastifyReply, origin: string, fragment: Record<string, string>): FastifyReply {
  reply.header('cache-control', 'no-store');
  return reply.redirect(`${origin}/#${new URLSearchParams(fragment).toString()}`, 303);
}

const redirectResponse = z.null().describe('303 See Other: the Location header says where the browser goes');

export const ssoLoginRoutes: FastifyPluginAsyncZod<{ logins: SsoLoginService; publicUrl: string | undefined; logger: Logger }> = async (app, { logins, publicUrl, logger }) => {
  const failed = (request: FastifyRequest, reply: FastifyReply, err: unknown) => {
    const origin = consoleOrigin(request, publicUrl);
    if (err instanceof SsoRefusal) {
      if (err.actor) noteAudit(request, { actor_type: 'user', actor: err.actor, action: 'auth.sso_refused' });
      return backToConsole(reply, origin, { sso_error: err.message });
    }
    // The browser is mid-redirect: a JSON error page would strand the user, so say it on the sign-in page.
    logger.error({ err, reqId: request.id }, 'single sign-on failed');
    return backToConsole(reply, origin, { sso_error: `Single sign-on failed (request ${request.id}). Please try again.` });
  };

  app.get(
    '/auth/sso/providers',
    {
      config: { access: 'public' },
      schema: { summary: 'The single sign-on providers the sign-in page offers', tags, response: { 200: z.array(publicProviderSchema) } },
    },
    async () => (await logins.buttons()).map((p) => ({ ...p, start_url: `/api/v1/auth/sso/${p.id}/start` })),
  );

  app.get(
    '/auth/sso/:id/start',
    {
      config: { access: 'public' },
      schema: {
        summary: 'Begin signing in with a provider (open in the browser)',
        description: 'Redirects (303) to the provider with state, nonce and a PKCE challenge, and sets a cookie for this sign-in. A provider that is unknown, disabled or unreachable redirects to the console with `#sso_error=`.',
        tags,
        params: idParams,
        response: { 303: redirectResponse },
      },
    },
    async (request, reply) => {
      try {
        const { location, browserSecret } = await logins.start(request.params.id, consoleOrigin(request, publicUrl));
        setBrowserCookie(request, reply, browserSecret, COOKIE_SECONDS);
        reply.header('cache-control', 'no-store');
        return await reply.redirect(location, 303);
      } catch (err) {
        return failed(request, reply, err);
      }
    },
  );

  app.get(
    '/auth/sso/:id/callback',
    {
      config: { access: 'public' },
      schema: {
        summary: 'Where the provider sends the browser back (the redirect URI to register)',
        description: 'Checks the state (once, same browser), exchanges the code with the PKCE verifier and checks the ID token (nonce, issuer, audience, signature). Redirects (303) to the console with `#sso_ticket=` for POST /auth/sso/exchange, or `#sso_error=` with a message.',
        tags,
        params: idParams,
        querystring: callbackQuery,
        response: { 303: redirectResponse },
      },
    },
    async (request, reply) => {
      try {
        const outcome = await logins.callback(request.params.id, request.query, browserSecretOf(request));
        if (outcome.created) noteAudit(request, { actor_type: 'user', actor: outcome.username, action: 'auth.sso_user_created' });
        return await backToConsole(reply, consoleOrigin(request, publicUrl), { sso_ticket: outcome.ticket });
      } catch (err) {
        return failed(request, reply, err);
      }
    },
  );

  app.post(
    '/auth/sso/exchange',
    {
      config: { access: 'public' },
      schema: {
        summary: 'Trade a single sign-on ticket for an access token (or the TOTP step)',
        description:
          'The ticket from the callback\'s `#sso_ticket=`, once, within 2 minutes, from the browser that began the sign-in (its cookie). ' +
          'When the provider did not report a second factor (`amr` without `mfa`) and the user has one, the answer is the pending login for /auth/2fa/validate.',
        tags,
        body: exchangeBody,
        response: { 200: z.union([tokenResponse, pendingResponse]) },
      },
    },
    async (request, reply) => {
      noteAudit(request, { actor_type: 'user', actor: 'single sign-on', action: 'auth.login_failed' });
      const { result, username } = await logins.exchange(request.body.ticket, browserSecretOf(request), clientOf(request));
      setBrowserCookie(request, reply, '', 0);
      if (result.kind === 'pending') {
        noteAudit(request, { actor_type: 'user', actor: username, action: 'auth.login_pending_2fa' });
        return pendingBody(result);
      }
      noteAudit(request, { actor_type: 'user', actor: result.user.username, action: 'auth.login' });
      return tokenBody(result);
    },
  );
};
