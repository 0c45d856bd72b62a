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
    async (request) => {
      const view = await settings.update(callerOf(request), request.body);
      request.auditTarget = { label: changedSettings(request.body) };
      return view;
    },
  );
};

/**
 * What a change set, for the audit log: the values of switches and numbers (turning device recording
 * off must be visible there), only the names of text settings (two of them are secrets).
 */
function changedSettings(body: Record<string, unknown>): string {
  const parts = Object.entries(body)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => (typeof value === 'boolean' || typeof value === 'number' ? `${name}=${value}` : value === null ? `${name} cleared` : `${name} set`));
  return `settings: ${parts.join(', ') || 'nothing changed'}`;
}
