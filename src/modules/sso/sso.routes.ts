// /sso: managing single sign-on. Providers decide who becomes a user and with which role, which is
// managing users, so the level is `user_admin` (admin users with every customer; API keys 403), as for
// /users: the contract keeps user management away from keys.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { idParams, okSchema } from '../../http/common-schemas.js';
import { consoleOrigin } from './console-origin.js';
import { redirectUriOf, type SsoProviderService } from './sso-providers.service.js';
import type { ProviderRow } from './sso.repo.js';
import { createProviderBody, passwordLoginSchema, providerSchema, toProviderDto, updateProviderBody } from './sso.schemas.js';

const tags = ['auth'];

export const ssoRoutes: FastifyPluginAsyncZod<{ providers: SsoProviderService; publicUrl: string | undefined }> = async (app, { providers, publicUrl }) => {
  const dto = (row: ProviderRow, origin: string) => toProviderDto(row, providers.secretOf(row), redirectUriOf(origin, row.id));

  app.get(
    '/sso/providers',
    {
      config: { access: 'user_admin' },
      schema: {
        summary: 'Single sign-on providers (secrets as hints, with the redirect URI to register)',
        description: 'The redirect URI is under PUBLIC_URL when set, else under the address this request came to. Not paged: a handful an admin configured.',
        tags,
        response: { 200: z.array(providerSchema) },
      },
    },
    async (request) => {
      const origin = consoleOrigin(request, publicUrl);
      return (await providers.list()).map((row) => dto(row, origin));
    },
  );

  app.post(
    '/sso/providers',
    {
      config: { access: 'user_admin', audit: 'sso.provider_create' },
      schema: {
        summary: 'Add an OpenID Connect provider',
        description: 'The issuer must be https (http only on localhost, 127.0.0.1 or ::1): 400 otherwise. A name already used is 409.',
        tags,
        body: createProviderBody,
        response: { 201: providerSchema },
      },
    },
    async (request, reply) => {
      const row = await providers.create(request.body);
      return reply.code(201).send(dto(row, consoleOrigin(request, publicUrl)));
    },
  );

  app.put(
    '/sso/providers/:id',
    {
      config: { access: 'user_admin', audit: 'sso.provider_update' },
      schema: { summary: 'Change an OpenID Connect provider', tags, params: idParams, body: updateProviderBody, response: { 200: providerSchema } },
    },
    async (request) => dto(await providers.update(request.params.id, request.body), consoleOrigin(request, publicUrl)),
  );

  app.delete(
    '/sso/providers/:id',
    {
      config: { access: 'user_admin', audit: 'sso.provider_delete' },
      schema: {
        summary: 'Remove an OpenID Connect provider',
        description: 'Users it created stay; their link to the provider\'s account stays too, so adding the provider again lets them sign in as before.',
        tags,
        params: idParams,
        response: { 200: okSchema },
      },
    },
    async (request) => {
      await providers.delete(request.params.id);
      return { ok: true as const };
    },
  );

  app.get(
    '/sso/password-login',
    {
      config: { access: 'user_admin' },
      schema: { summary: 'Whether users other than admins may sign in with a password', tags, response: { 200: passwordLoginSchema } },
    },
    async () => ({ password_login: await providers.passwordLogin() }),
  );

  app.put(
    '/sso/password-login',
    {
      config: { access: 'user_admin', audit: 'sso.password_login' },
      schema: {
        summary: 'Turn password sign-in off (or on) for users other than admins',
        description: 'admins_only: a non-admin\'s correct password is answered 403 FORBIDDEN (they use single sign-on); admins keep their password, so a failing provider cannot lock the server out.',
        tags,
        body: passwordLoginSchema,
        response: { 200: passwordLoginSchema },
      },
    },
    async (request) => {
      await providers.setPasswordLogin(request.body.password_login);
      return { password_login: await providers.passwordLogin() };
    },
  );
};
