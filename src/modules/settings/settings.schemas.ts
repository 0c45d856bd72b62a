import { z } from 'zod';
import { deviceSettingsPatch, deviceSettingsView } from './device-settings.js';

const url = (protocols: string[]) =>
  z
    .string()
    .max(2048)
    .refine((v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    }, `must be a ${protocols.map((p) => p.replace(':', '')).join(' or ')} URL`);

export const settingsSchema = z
  .object({
    backend_url: z.string().nullable().describe('Base URL agents and installers use for the REST API'),
    ws_url: z.string().nullable().describe('WebSocket URL agents connect to; unset, installer packages carry the agent channel under backend_url (wss://…/api/v1/agent/ws)'),
    installer_api_key: z.string().nullable().describe('Hint of the agent key put into installer packages downloaded for no customer (customers\' packages carry their own key)'),
    webhook_secret: z.string().nullable().describe('Hint (last 4 characters) of the webhook signing secret'),
    passwordless_login: z.boolean().describe('Whether users may sign in with a passkey alone, without username and password (default false)'),
    ...deviceSettingsView,
  })
  .meta({ id: 'Settings' });

export const updateSettingsBody = z
  .object({
    backend_url: url(['http:', 'https:']).nullable().optional(),
    ws_url: url(['ws:', 'wss:']).nullable().optional(),
    installer_api_key: z.string().min(1).max(200).nullable().optional().describe('An existing API key with permission agent and no customer scope, for packages downloaded for no customer in particular'),
    webhook_secret: z.string().min(16).max(256).nullable().optional().describe('HMAC-SHA256 key for x-rmm-signature'),
    passwordless_login: z
      .boolean()
      .optional()
      .describe('Let users sign in with a passkey alone (it must verify the user: PIN or biometrics), without username, password or second step'),
    ...deviceSettingsPatch,
  })
  .strict()
  .describe('Only the fields given change; null clears a setting');
