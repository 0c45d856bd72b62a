// /apikeys: create (the key is shown once), list (masked), delete. No key can out-rank its creator.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { callerOf } from '../../http/auth.js';
import { idParams, okSchema } from '../../http/common-schemas.js';
import { listDescription, listResponse, sendList } from '../../http/pagination.js';
import { API_KEY_LIST, apiKeyListQuery, apiKeySchema, createApiKeyBody, createdApiKeySchema, toApiKeyDto } from './api-keys.schemas.js';
import type { ApiKeyService } from './api-keys.service.js';

const tags = ['api keys'];

export const apiKeyRoutes: FastifyPluginAsyncZod<{ apiKeys: ApiKeyService }> = async (app, { apiKeys }) => {
  app.get(
    '/apikeys',
    {
      config: { access: 'read' },
      schema: {
        summary: 'List API keys (masked)',
        description: listDescription(API_KEY_LIST, "A customer-scoped key sees its customer's keys only."),
        tags,
        querystring: apiKeyListQuery,
        response: { 200: listResponse(apiKeySchema, API_KEY_LIST) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      return sendList(request, reply, API_KEY_LIST, { item: apiKeySchema, dto: toApiKeyDto, fetch: (page) => apiKeys.list(caller, page) });
    },
  );

  app.post(
    '/apikeys',
    {
      config: { access: 'write', audit: 'apikey.create' },
      schema: {
        summary: 'Create an API key; the response is the only place the key appears',
        description:
          'A key may create keys up to its own permission (agent < read < write < admin) and within its own ' +
          'customer scope: 403 otherwise; a customer outside the scope is 404. An enrollment key is one with `expires_at` ' +
          'or `max_uses`: past its expiry or its last use every request with it answers 401 UNAUTHORIZED (`API key expired at …`, ' +
          '`API key used up …`), and lists show it with `expired: true`. It is meant for installing: the install script ' +
          '(/install/agent.sh, /install/agent.ps1) counts a use and gives the device its customer\'s installer key, so agents ' +
          'installed with it keep working after it expires.',
        tags,
        body: createApiKeyBody,
        response: { 201: createdApiKeySchema },
      },
    },
    async (request, reply) => {
      const { expires_at: expiresAt, ...rest } = request.body;
      const created = await apiKeys.create(callerOf(request), { ...rest, expires_at: expiresAt ? new Date(expiresAt) : null });
      return reply.code(201).send({ ...toApiKeyDto(created), key: created.key });
    },
  );

  app.delete(
    '/apikeys/:id',
    {
      config: { access: 'write', audit: 'apikey.delete' },
      schema: {
        summary: 'Delete an API key',
        description: 'The key stops working at once on this server; other servers sharing the database stop accepting it within 10 s.',
        tags,
        params: idParams,
        response: { 200: okSchema },
      },
    },
    async (request) => {
      await apiKeys.delete(callerOf(request), request.params.id);
      return { ok: true as const };
    },
  );
};
