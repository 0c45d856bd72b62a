// Server settings (contract §10): the URLs and the agent key that installers carry, the webhook
// signing secret, and whether passkeys alone may sign in (issue 35). The two secrets are encrypted at
// rest and only ever shown as hints.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { ApiKeyService } from '../api-keys/api-keys.service.js';
import { keyHint } from '../api-keys/key-format.js';
import { requireUnscoped, type Caller } from '../auth/caller.js';
import { deviceSettingsOf, type DeviceSettings } from './device-settings.js';
import * as repo from './settings.repo.js';

const SECRET_KEYS = ['installer_api_key', 'webhook_secret'] as const;
type SecretSetting = (typeof SECRET_KEYS)[number];

export interface SettingsView extends DeviceSettings {
  backend_url: string | null;
  ws_url: string | null;
  installer_api_key: string | null;
  webhook_secret: string | null;
  passwordless_login: boolean;
}

type TextSetting = 'backend_url' | 'ws_url' | 'installer_api_key' | 'webhook_secret';
export type SettingsPatch = Partial<Record<TextSetting, string | null>> & { passwordless_login?: boolean } & Partial<DeviceSettings>;

export class SettingsService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly box: SecretBox,
    private readonly apiKeys: ApiKeyService,
    private readonly clock: Clock,
  ) {}

  async view(caller: Caller): Promise<SettingsView> {
    requireUnscoped(caller);
    const stored = await repo.readSettings(this.db);
    const secret = (name: SecretSetting) => {
      const sealed = stored.get(name);
      return sealed === undefined ? null : this.box.open(sealed);
    };
    const installerKey = secret('installer_api_key');
    const webhookSecret = secret('webhook_secret');
    return {
      backend_url: stored.get('backend_url') ?? null,
      ws_url: stored.get('ws_url') ?? null,
      installer_api_key: installerKey === null ? null : keyHint(installerKey),
      webhook_secret: webhookSecret === null ? null : `…${webhookSecret.slice(-4)}`,
      passwordless_login: stored.get('passwordless_login') === 'true',
      ...deviceSettingsOf(stored),
    };
  }

  async update(caller: Caller, patch: SettingsPatch): Promise<SettingsView> {
    requireUnscoped(caller);
    const key = patch.installer_api_key;
    if (key) {
      // Installers hand this key to every machine they set up: it must be a real key of permission agent.
      const owner = await this.apiKeys.authenticate(key);
      if (owner?.kind !== 'api_key' || owner.permission !== 'agent') {
        throw new AppError('VALIDATION_ERROR', 'installer_api_key must be an existing API key with permission agent', {
          details: [{ path: 'installer_api_key', message: 'not an existing agent key' }],
        });
      }
      // The global key goes into packages for no customer in particular; a customer's packages carry that
      // customer's own installer key, so a scoped key here would enrol other customers' devices into it.
      if (owner.customerId !== null) {
        throw new AppError('VALIDATION_ERROR', "installer_api_key must not be scoped to a customer: a customer's packages carry its own installer key (download with customer_id)", {
          details: [{ path: 'installer_api_key', message: 'scoped to a customer' }],
        });
      }
    }
    const values: Record<string, string | null> = {};
    for (const [name, value] of Object.entries(patch)) {
      if (value === undefined) continue;
      if (typeof value === 'boolean' || typeof value === 'number') {
        values[name] = String(value);
        continue;
      }
      const secret = (SECRET_KEYS as readonly string[]).includes(name);
      values[name] = value === null ? null : secret ? this.box.seal(value) : value;
    }
    await repo.writeSettings(this.db, values, this.clock.now());
    return this.view(caller);
  }

  /**
   * Where agents reach this server (installer packages, firmware download URLs): as configured, and
   * without a `ws_url` setting the agent channel under `backend_url`, where agents find it themselves.
   */
  async agentUrls(): Promise<{ backend_url: string | null; ws_url: string | null }> {
    const stored = await repo.readSettings(this.db);
    const backend = stored.get('backend_url') ?? null;
    return { backend_url: backend, ws_url: stored.get('ws_url') ?? (backend === null ? null : agentChannelUrl(backend)) };
  }

  /** Whether a passkey alone may sign a user in (off unless an admin turned it on). */
  async passwordlessLogin(): Promise<boolean> {
    return (await repo.readSettings(this.db)).get('passwordless_login') === 'true';
  }

  /** The settings of device sessions (recording, limits, API keys' access), defaults filled in. */
  async device(): Promise<DeviceSettings> {
    return deviceSettingsOf(await repo.readSettings(this.db));
  }

  /** A secret setting in clear text, for the features that use it (installer download, webhooks). */
  async secret(name: SecretSetting): Promise<string | null> {
    const sealed = (await repo.readSettings(this.db)).get(name);
    return sealed === undefined ? null : this.box.open(sealed);
  }
}

/**
 * The agent channel (`GET /api/v1/agent/ws`) under a backend URL, as the reference agent builds it from
 * its `--server`: a path prefix is kept, http becomes ws and https wss.
 */
export function agentChannelUrl(backendUrl: string): string {
  const base = new URL(backendUrl);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  const url = new URL('api/v1/agent/ws', base);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}
