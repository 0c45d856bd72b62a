// Server settings. The URLs show as stored and an emptied one is cleared. The two secrets come back
// only as hints, so their fields start empty: left empty they stay as they are, typed they are
// replaced, and "Clear" removes them. Only changed fields are sent (PUT changes only what it is given).
// A checkbox decides whether a passkey alone may sign in (passwordless_login).
import { useState } from 'react';
import type { ApiBody, ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import { useSubmit } from '../ui/use-submit';
import { ErrorBanner, Loading } from '../ui/widgets';
import { useResource } from '../use-resource';
import { DeviceSettingsForm } from './device-settings';
import { RemoteAccessSettingsForm } from './remote-access-settings';
import { SsoSettings } from './sso-settings';
import './settings.css';

type Settings = ApiBody<'/settings'>;
/** The text settings of the form's fields; passwordless_login is a checkbox of its own, and the device
 * sessions' and remote access's settings have their own forms (settings-group.tsx). */
type Key = 'backend_url' | 'ws_url' | 'installer_api_key' | 'webhook_secret';

interface Field {
  key: Key;
  label: string;
  description: string;
  secret: boolean;
  placeholder: string;
  minLength?: number;
}

const FIELDS: readonly Field[] = [
  { key: 'backend_url', label: 'Backend URL', secret: false, placeholder: 'https://rmm.example.com', description: 'Base URL agents and installers use for the REST API (http or https).' },
  { key: 'ws_url', label: 'WebSocket URL', secret: false, placeholder: 'wss://rmm.example.com/api/v1/agent/ws', description: 'The URL agents connect to for commands (ws or wss).' },
  {
    key: 'installer_api_key',
    label: 'Installer API key',
    secret: true,
    placeholder: 'rmm_…',
    description: 'An existing API key with permission "agent"; the installer download carries it so new agents can register.',
  },
  {
    key: 'webhook_secret',
    label: 'Webhook secret',
    secret: true,
    placeholder: 'at least 16 characters',
    minLength: 16,
    description: 'Key for the HMAC-SHA256 signature (x-rmm-signature) on task webhooks.',
  },
];

export function SettingsPage() {
  const settings = useResource((signal) => api<Settings>('/settings', { signal }), []);
  return (
    <section>
      <h1>Settings</h1>
      <ErrorBanner error={settings.error} />
      {/* Keyed by the loaded values: the form starts from what the server holds. */}
      {settings.data ? <SettingsForm key={JSON.stringify(settings.data)} current={settings.data} /> : !settings.error && <Loading />}
      {settings.data && <DeviceSettingsForm key={`device ${JSON.stringify(settings.data)}`} initial={settings.data} />}
      {settings.data && <RemoteAccessSettingsForm key={`remote ${JSON.stringify(settings.data)}`} initial={settings.data} />}
      <SsoSettings />
    </section>
  );
}

function SettingsForm({ current }: { current: Settings }) {
  const [shown, setShown] = useState(current);
  const [values, setValues] = useState<Record<Key, string>>(() => initialValues(current));
  const [cleared, setCleared] = useState<Partial<Record<Key, boolean>>>({});
  const [passwordless, setPasswordless] = useState(current.passwordless_login);
  const [saved, setSaved] = useState(false);

  const { busy, error, submit } = useSubmit(async () => {
    setSaved(false);
    const patch: ApiRequest<'/settings', 'put'> = {};
    if (passwordless !== shown.passwordless_login) patch.passwordless_login = passwordless;
    for (const field of FIELDS) {
      const value = values[field.key].trim();
      if (field.secret) {
        if (cleared[field.key]) patch[field.key] = null;
        else if (value) patch[field.key] = value;
      } else if (value !== (shown[field.key] ?? '')) {
        patch[field.key] = value || null;
      }
    }
    const next = await api<Settings>('/settings', { method: 'PUT', body: patch });
    // Secrets typed are not kept on screen once stored; the URLs show as the server now holds them.
    setShown(next);
    setValues(initialValues(next));
    setCleared({});
    setPasswordless(next.passwordless_login);
    setSaved(true);
  });

  return (
    <form className="card settings-form" aria-label="Settings" onSubmit={(e) => void submit(e)}>
      {FIELDS.map((field) => {
        const hint = shown[field.key];
        return (
          <div key={field.key} className="settings-field">
            <label>
              {field.label}
              <input
                type={field.secret ? 'password' : field.key.endsWith('url') ? 'url' : 'text'}
                value={values[field.key]}
                onChange={(e) => {
                  setSaved(false);
                  setValues({ ...values, [field.key]: e.target.value });
                }}
                placeholder={field.secret && hint ? `unchanged (${hint})` : field.placeholder}
                minLength={field.minLength}
                maxLength={field.secret ? 256 : 2048}
                disabled={busy || (field.secret && cleared[field.key])}
                autoComplete="off"
              />
            </label>
            <p className="muted settings-description">
              {field.description}
              {field.secret && (hint ? ` Now set (${hint}); leave empty to keep it.` : ' Not set.')}
            </p>
            {field.secret && hint && (
              <label className="inline">
                <input type="checkbox" checked={cleared[field.key] ?? false} onChange={(e) => setCleared({ ...cleared, [field.key]: e.target.checked })} /> Remove the stored
                value
              </label>
            )}
          </div>
        );
      })}
      <div className="settings-field">
        <label className="inline">
          <input
            type="checkbox"
            checked={passwordless}
            disabled={busy}
            onChange={(e) => {
              setSaved(false);
              setPasswordless(e.target.checked);
            }}
          />{' '}
          Allow sign-in with a passkey alone
        </label>
        <p className="muted settings-description">
          Users then sign in with a passkey that verifies them (fingerprint, face or PIN), without username, password or second step. Off, a passkey is only a second factor
          after the password.
        </p>
      </div>
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : 'Save settings'}
        </button>
      </div>
      <ErrorBanner error={error} />
      {saved && (
        <div className="banner banner-info" role="status">
          Settings saved.
        </div>
      )}
    </form>
  );
}

function initialValues(settings: Settings): Record<Key, string> {
  return { backend_url: settings.backend_url ?? '', ws_url: settings.ws_url ?? '', installer_api_key: '', webhook_secret: '' };
}
