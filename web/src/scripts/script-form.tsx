// Create or edit a library script: name, description, shell, the platforms it may run on, parameters
// (name, default, description; added and removed as rows) and the body. On an error everything typed
// stays for the user to correct; the server's field errors are listed under the form.
import { useId, useState } from 'react';
import type { ApiRequest } from '../api/api-types';
import { api, ApiError } from '../api/client';
import { PLATFORM_LABELS, type Platform } from '../api/types';
import { useSubmit } from '../ui/use-submit';
import { ErrorBanner } from '../ui/widgets';
import { parameterReference, PLATFORMS, SHELL_LABELS, SHELLS, type Script, type ScriptParameter, type Shell } from './script-types';

/** A new, empty parameter row. */
const EMPTY: ScriptParameter = { name: '', default: '', description: '' };

export function ScriptForm({ script, onDone }: { script?: Script; onDone: (saved: Script | undefined) => void }) {
  const [name, setName] = useState(script?.name ?? '');
  const [description, setDescription] = useState(script?.description ?? '');
  const [shell, setShell] = useState<Shell>(script?.shell ?? 'sh');
  const [platforms, setPlatforms] = useState<Platform[]>(script?.platforms ?? ['linux', 'freebsd']);
  const [parameters, setParameters] = useState<ScriptParameter[]>(script?.parameters ?? []);
  const [body, setBody] = useState(script?.body ?? '');
  const ids = useId();

  const { busy, error, submit } = useSubmit(async () => {
    const payload = {
      name: name.trim(),
      description,
      shell,
      platforms,
      body,
      parameters: parameters.filter((p) => p.name.trim() !== '').map((p) => ({ ...p, name: p.name.trim() })),
    } satisfies ApiRequest<'/scripts', 'post'> & ApiRequest<'/scripts/{id}', 'put'>;
    if (platforms.length === 0) throw new Error('Choose at least one platform the script may run on.');
    const saved = script
      ? await api<Script>(`/scripts/${script.id}`, { method: 'PUT', body: payload })
      : await api<Script>('/scripts', { method: 'POST', body: payload });
    onDone(saved);
  });

  const togglePlatform = (p: Platform, on: boolean) => setPlatforms((list) => (on ? PLATFORMS.filter((x) => x === p || list.includes(x)) : list.filter((x) => x !== p)));
  const setParameter = (index: number, change: Partial<ScriptParameter>) => setParameters((list) => list.map((p, i) => (i === index ? { ...p, ...change } : p)));
  const title = script ? `Edit ${script.name}` : 'New script';

  return (
    <form className="card script-form" onSubmit={(e) => void submit(e)} aria-label={script ? 'Edit the script' : 'New script'}>
      <h2>{title}</h2>
      <div className="row">
        <label className="wide">
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} />
        </label>
        <div className="field">
          <label htmlFor={`${ids}-shell`}>Shell</label>
          <select id={`${ids}-shell`} value={shell} onChange={(e) => setShell(e.target.value as Shell)}>
            {SHELLS.map((s) => (
              <option key={s} value={s}>
                {SHELL_LABELS[s]}
              </option>
            ))}
          </select>
        </div>
        <fieldset className="platforms">
          <legend>Runs on</legend>
          {PLATFORMS.map((p) => (
            <label key={p} className="inline">
              <input type="checkbox" checked={platforms.includes(p)} onChange={(e) => togglePlatform(p, e.target.checked)} /> {PLATFORM_LABELS[p]}
            </label>
          ))}
        </fieldset>
      </div>
      <label>
        Description
        <input value={description} onChange={(e) => setDescription(e.target.value)} maxLength={2000} />
      </label>
      <h3>Parameters</h3>
      <p className="muted">
        Each reaches the script as an environment variable ({parameterReference(shell, 'NAME')}); a run may give another value than the default.
      </p>
      {parameters.map((p, i) => (
        <div className="row parameter-row" key={i} role="group" aria-label={`Parameter ${i + 1}`}>
          <label>
            Parameter name
            <input className="mono" value={p.name} onChange={(e) => setParameter(i, { name: e.target.value })} required maxLength={64} pattern="[A-Za-z_][A-Za-z0-9_]*" title="A letter or _, then letters, digits or _" spellCheck={false} />
          </label>
          <label>
            Default
            <input value={p.default} onChange={(e) => setParameter(i, { default: e.target.value })} maxLength={1000} spellCheck={false} />
          </label>
          <label className="wide">
            Parameter description
            <input value={p.description} onChange={(e) => setParameter(i, { description: e.target.value })} maxLength={500} />
          </label>
          <button type="button" onClick={() => setParameters((list) => list.filter((_, j) => j !== i))}>
            Remove
          </button>
        </div>
      ))}
      <div className="row">
        <button type="button" onClick={() => setParameters((list) => [...list, EMPTY])} disabled={parameters.length >= 20}>
          Add parameter
        </button>
      </div>
      <label>
        Script
        <textarea name="body" className="mono" rows={10} value={body} onChange={(e) => setBody(e.target.value)} required maxLength={10_000} spellCheck={false} />
      </label>
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : script ? 'Save script' : 'Create script'}
        </button>
        <button type="button" onClick={() => onDone(undefined)} disabled={busy}>
          Cancel
        </button>
      </div>
      <ErrorBanner error={error} />
      {error instanceof ApiError && error.details.length > 0 && (
        <ul className="invalid-list">
          {error.details.map((d) => (
            <li key={d.path}>
              <span className="mono">{d.path}</span>: {d.message}
            </li>
          ))}
        </ul>
      )}
    </form>
  );
}
