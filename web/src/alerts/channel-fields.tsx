// Each channel type's settings and secret fields, exactly as the API names them, with their defaults;
// the draft they are typed into, and the settings and secrets objects a save sends. Secrets are never
// shown: a stored one appears as its hint, an empty field on edit keeps it, and an optional one can be
// cleared on purpose.
import { FieldError, invalidProps, type FieldErrors } from './field-errors';
import type { Channel, ChannelType } from './alert-types';

interface SettingSpec {
  key: string;
  label: string;
  input: 'text' | 'number' | 'url' | 'list' | 'select';
  required?: boolean;
  /** The server's default, shown as the placeholder (and used when left empty). */
  placeholder?: string;
  options?: readonly { value: string; label: string }[];
  wide?: boolean;
}

interface SecretSpec {
  key: string;
  label: string;
  required: boolean;
  placeholder?: string;
}

export const SETTINGS: Record<ChannelType, readonly SettingSpec[]> = {
  email: [
    { key: 'host', label: 'SMTP host', input: 'text', required: true, placeholder: 'smtp.example.com' },
    { key: 'port', label: 'Port', input: 'number', placeholder: '587' },
    {
      key: 'security',
      label: 'Security',
      input: 'select',
      options: [
        { value: 'starttls', label: 'STARTTLS' },
        { value: 'tls', label: 'TLS' },
        { value: 'none', label: 'None' },
      ],
    },
    { key: 'username', label: 'Username (optional)', input: 'text' },
    { key: 'from', label: 'From', input: 'text', required: true, placeholder: 'rmm@example.com' },
    { key: 'to', label: 'To (one address per line, up to 20)', input: 'list', required: true, placeholder: 'oncall@example.com', wide: true },
  ],
  webhook: [{ key: 'url', label: 'URL', input: 'url', required: true, placeholder: 'https://example.com/hooks/rmm', wide: true }],
  ntfy: [
    { key: 'server_url', label: 'Server URL', input: 'url', placeholder: 'https://ntfy.sh', wide: true },
    { key: 'topic', label: 'Topic', input: 'text', required: true },
    {
      key: 'priority',
      label: 'Priority',
      input: 'select',
      options: [{ value: '', label: 'default' }, ...[1, 2, 3, 4, 5].map((n) => ({ value: String(n), label: String(n) }))],
    },
  ],
  teams: [],
  slack: [],
  discord: [],
  telegram: [
    { key: 'chat_id', label: 'Chat id', input: 'text', required: true, placeholder: '-1001234567890' },
    { key: 'api_url', label: 'API URL', input: 'url', placeholder: 'https://api.telegram.org', wide: true },
  ],
};

export const SECRETS: Record<ChannelType, readonly SecretSpec[]> = {
  email: [{ key: 'password', label: 'Password (optional)', required: false }],
  webhook: [{ key: 'secret', label: 'Signing secret (optional; else the server’s webhook secret)', required: false }],
  ntfy: [{ key: 'token', label: 'Access token (optional)', required: false }],
  teams: [{ key: 'webhook_url', label: 'Workflows webhook URL', required: true, placeholder: 'https://….logic.azure.com/workflows/…' }],
  slack: [{ key: 'webhook_url', label: 'Incoming webhook URL', required: true, placeholder: 'https://hooks.slack.com/services/…' }],
  discord: [{ key: 'webhook_url', label: 'Webhook URL', required: true, placeholder: 'https://discord.com/api/webhooks/…' }],
  telegram: [{ key: 'bot_token', label: 'Bot token', required: true, placeholder: '123456:ABC…' }],
};

export interface ChannelDraft {
  settings: Record<string, string>;
  secrets: Record<string, string>;
  /** Optional secrets to remove on save. */
  clear: Record<string, boolean>;
}

export function channelDraftOf(channel: Channel | null): ChannelDraft {
  const settings: Record<string, string> = {};
  for (const [key, value] of Object.entries(channel?.settings ?? {})) {
    if (Array.isArray(value)) settings[key] = value.join('\n');
    else if (value !== null && value !== undefined) settings[key] = String(value);
  }
  if (!channel) settings.security = 'starttls';
  return { settings, secrets: {}, clear: {} };
}

export function settingsFor(type: ChannelType, draft: ChannelDraft): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const spec of SETTINGS[type]) {
    const raw = (draft.settings[spec.key] ?? '').trim();
    if (!raw) continue;
    if (spec.input === 'list') out[spec.key] = raw.split(/[\s,;]+/).filter(Boolean);
    else if (spec.input === 'number' || (spec.key === 'priority' && type === 'ntfy')) out[spec.key] = Number(raw);
    else out[spec.key] = raw;
  }
  return out;
}

/** New values only: an empty field keeps the stored secret (on edit), a cleared optional one is null. */
export function secretsFor(type: ChannelType, draft: ChannelDraft, editing: boolean): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const spec of SECRETS[type]) {
    const value = draft.secrets[spec.key] ?? '';
    if (value) out[spec.key] = value;
    else if (editing && !spec.required && draft.clear[spec.key]) out[spec.key] = null;
  }
  return out;
}

interface FieldsProps {
  id: string;
  type: ChannelType;
  draft: ChannelDraft;
  onChange: (d: ChannelDraft) => void;
  errors: FieldErrors;
  /** The stored channel's secret hints when editing. */
  hints: Record<string, string> | null;
}

export function ChannelFields({ id, type, draft, onChange, errors, hints }: FieldsProps) {
  const setSetting = (key: string, value: string) => onChange({ ...draft, settings: { ...draft.settings, [key]: value } });
  const setSecret = (key: string, value: string) => onChange({ ...draft, secrets: { ...draft.secrets, [key]: value } });
  const setClear = (key: string, on: boolean) => onChange({ ...draft, clear: { ...draft.clear, [key]: on }, secrets: { ...draft.secrets, [key]: '' } });
  return (
    <div className="row">
      {SETTINGS[type].map((spec) => {
        const fid = `${id}-setting-${spec.key}`;
        const field = `settings.${spec.key}`;
        const common = { id: fid, value: draft.settings[spec.key] ?? '', required: spec.required, ...invalidProps(errors, field, fid) };
        return (
          <div key={spec.key} className={`field${spec.wide ? ' grow' : ''}`}>
            <label htmlFor={fid}>{spec.label}</label>
            {spec.input === 'select' ? (
              <select {...common} onChange={(e) => setSetting(spec.key, e.target.value)}>
                {spec.options?.map((o) => (
                  <option key={o.value} value={o.value}>
                    {o.label}
                  </option>
                ))}
              </select>
            ) : spec.input === 'list' ? (
              <textarea {...common} rows={3} placeholder={spec.placeholder} onChange={(e) => setSetting(spec.key, e.target.value)} spellCheck={false} />
            ) : (
              <input {...common} type={spec.input} placeholder={spec.placeholder} maxLength={2000} onChange={(e) => setSetting(spec.key, e.target.value)} spellCheck={false} />
            )}
            <FieldError errors={errors} field={field} id={fid} />
          </div>
        );
      })}
      {SECRETS[type].map((spec) => {
        const fid = `${id}-secret-${spec.key}`;
        const field = `secrets.${spec.key}`;
        const hint = hints?.[spec.key];
        const cleared = Boolean(draft.clear[spec.key]);
        return (
          <div key={spec.key} className="field grow">
            <label htmlFor={fid}>{spec.label}</label>
            <input
              id={fid}
              type="password"
              autoComplete="new-password"
              value={draft.secrets[spec.key] ?? ''}
              onChange={(e) => setSecret(spec.key, e.target.value)}
              required={spec.required && !hint}
              disabled={cleared}
              maxLength={4000}
              placeholder={hint ? 'leave empty to keep the stored one' : spec.placeholder}
              {...invalidProps(errors, field, fid)}
            />
            {hint && (
              <small className="muted" data-testid="secret-hint">
                Stored: <code>{hint}</code>
              </small>
            )}
            {hint && !spec.required && (
              <label className="inline">
                <input type="checkbox" checked={cleared} onChange={(e) => setClear(spec.key, e.target.checked)} />
                <span>Remove the stored {spec.key.replace(/_/g, ' ')}</span>
              </label>
            )}
            <FieldError errors={errors} field={field} id={fid} />
          </div>
        );
      })}
    </div>
  );
}
