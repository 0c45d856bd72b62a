// /settings: server-wide, so not for customer-scoped keys.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { callerOf } from '../../http/auth.js';
import { settingsSchema, updateSettingsBody } from './settings.schemas.js';
import type { SettingsService } from './settings.service.js';

const tags = ['settings'];

export const settingsRoutes: FastifyPluginAsyncZod<{ settings: SettingsService }> = async (app, { settings }) => {
  app.get(
    '/settings',
    { config: { access: 'read', serverWide: true }, schema: { summary: 'Server settings (secrets as hints)', tags, response: { 200: settingsSchema } } },
    async (request) => settings.view(callerOf(request)),
  );

  app.put(
    '/settings',
    {
      config: { access: 'settings', audit: 'settings.update', serverWide: true },
      schema: { summary: 'Change server settings', tags, body: updateSettingsBody, response: { 200: settingsSchema } },
    },
    async (request) => settings.update(callerOf(request), request.body),
  );
};
