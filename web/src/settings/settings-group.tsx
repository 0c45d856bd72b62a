// A form for one group of the server's settings made of checkboxes and whole numbers (device sessions,
// remote access). It starts from what the server holds and sends only what differs, so saving one
// group never rewrites another's values; a number may be shown in a larger unit (bytes as MiB).
import { useState } from 'react';
import type { ApiBody, ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import { useSubmit } from '../ui/use-submit';
import { ErrorBanner } from '../ui/widgets';

export type Settings = ApiBody<'/settings'>;
type Patch = ApiRequest<'/settings', 'put'>;
type KeyOf<V> = { [K in keyof Settings & keyof Patch]: Settings[K] extends V ? K : never }[keyof Settings & keyof Patch];
export type FlagKey = KeyOf<boolean>;
export type NumberKey = KeyOf<number>;

export interface FlagSetting {
  key: FlagKey;
  label: string;
  description: string;
}

export interface NumberSetting {
  key: NumberKey;
  label: string;
  min: number;
  max?: number;
  /** The stored value is this many times the shown one (1024² for a size shown in MiB). */
  unit?: number;
  description?: string;
}

export function SettingsGroupForm(props: { title: string; saveLabel: string; savedText: string; initial: Settings; flags: readonly FlagSetting[]; numbers: readonly NumberSetting[] }) {
  const { title, saveLabel, flags: FLAGS, numbers: NUMBERS } = props;
  // What the server holds now: the form sends only what differs from it.
  const [current, setCurrent] = useState(props.initial);
  const shown = (n: NumberSetting) => String(Math.round(current[n.key] / (n.unit ?? 1)));
  const [numbers, setNumbers] = useState(() => Object.fromEntries(NUMBERS.map((n) => [n.key, shown(n)])) as Record<NumberKey, string>);
  const [flags, setFlags] = useState(() => Object.fromEntries(FLAGS.map((f) => [f.key, current[f.key]])) as Record<FlagKey, boolean>);
  const [saved, setSaved] = useState(false);

  const { busy, error, submit } = useSubmit(async () => {
    setSaved(false);
    const patch: Patch = {};
    for (const f of FLAGS) if (flags[f.key] !== current[f.key]) patch[f.key] = flags[f.key];
    for (const n of NUMBERS) if (numbers[n.key] !== shown(n)) patch[n.key] = Number(numbers[n.key]) * (n.unit ?? 1);
    setCurrent(await api<Settings>('/settings', { method: 'PUT', body: patch }));
    setSaved(true);
  });

  return (
    <form className="card settings-form" aria-label={title} onSubmit={(e) => void submit(e)}>
      <h2>{title}</h2>
      {FLAGS.map((f) => (
        <div key={f.key} className="settings-field">
          <label className="inline">
            <input type="checkbox" checked={flags[f.key]} disabled={busy} onChange={(e) => setFlags({ ...flags, [f.key]: e.target.checked })} /> {f.label}
          </label>
          <p className="muted settings-description">{f.description}</p>
        </div>
      ))}
      {NUMBERS.map((n) => (
        <div key={n.key} className="settings-field">
          <label>
            {n.label}
            <input type="number" required min={n.min} max={n.max} step={1} value={numbers[n.key]} disabled={busy} onChange={(e) => setNumbers({ ...numbers, [n.key]: e.target.value })} />
          </label>
          {n.description && <p className="muted settings-description">{n.description}</p>}
        </div>
      ))}
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : saveLabel}
        </button>
      </div>
      <ErrorBanner error={error} />
      {saved && (
        <div className="banner banner-info" role="status">
          {props.savedText}
        </div>
      )}
    </form>
  );
}
