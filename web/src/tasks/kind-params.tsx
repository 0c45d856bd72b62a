// The inputs for a task kind's params (only the ones that kind has), and the params object they make.
// The limits are the server's (task-kinds.ts, commands.schemas.ts), so the browser catches most
// mistakes before a round trip; the server still has the last word.
import { useId } from 'react';
import { api } from '../api/client';
import { ParameterValues } from '../scripts/parameter-values';
import { defaultValues, type Script } from '../scripts/script-types';
import { useResource } from '../use-resource';
import type { TaskKind } from './task-types';

/** Every kind's inputs in one place, so switching kinds back and forth keeps what was typed. */
export interface ParamsDraft {
  reboot: boolean;
  version: string;
  delay: string;
  command: string;
  timeout: string;
  /** A saved script (kind script) and its parameter values. */
  scriptId: string;
  values: Record<string, string>;
}

export const EMPTY_PARAMS: ParamsDraft = { reboot: false, version: '', delay: '0', command: '', timeout: '60', scriptId: '', values: {} };

/** The inputs holding a task's stored params (editing), the rest left at their defaults. */
export function draftFrom(params: Record<string, unknown>): ParamsDraft {
  const text = (v: unknown, fallback: string) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : fallback);
  return {
    reboot: params.reboot === true,
    version: text(params.version, EMPTY_PARAMS.version),
    delay: text(params.delay, EMPTY_PARAMS.delay),
    command: text(params.command, EMPTY_PARAMS.command),
    timeout: text(params.timeout, EMPTY_PARAMS.timeout),
    scriptId: text(params.script_id, EMPTY_PARAMS.scriptId),
    values: typeof params.parameters === 'object' && params.parameters !== null ? (params.parameters as Record<string, string>) : {},
  };
}

export function paramsFor(kind: TaskKind, d: ParamsDraft): Record<string, unknown> {
  switch (kind) {
    case 'update':
    case 'security_update':
      return { reboot: d.reboot };
    case 'dist_upgrade':
      return { version: d.version.trim(), reboot: d.reboot };
    case 'reboot':
      return { delay: Number(d.delay) };
    case 'exec':
      // Sent as typed: leading spaces or a trailing newline can matter to a shell.
      return { command: d.command, timeout: Number(d.timeout) };
    case 'script':
      return { script_id: Number(d.scriptId), parameters: d.values, timeout: Number(d.timeout) };
    default:
      return {};
  }
}

export function KindParams({ kind, draft, onChange }: { kind: TaskKind; draft: ParamsDraft; onChange: (draft: ParamsDraft) => void }) {
  const set = <K extends keyof ParamsDraft>(key: K, value: ParamsDraft[K]) => onChange({ ...draft, [key]: value });
  const rebootBox = (
    <label className="inline">
      <input type="checkbox" checked={draft.reboot} onChange={(e) => set('reboot', e.target.checked)} />
      Reboot after updating
    </label>
  );
  switch (kind) {
    case 'update':
    case 'security_update':
      return <div className="row">{rebootBox}</div>;
    case 'dist_upgrade':
      return (
        <div className="row">
          <label>
            Target version
            <input value={draft.version} onChange={(e) => set('version', e.target.value)} required maxLength={100} placeholder="24.04" />
          </label>
          {rebootBox}
        </div>
      );
    case 'reboot':
      return (
        <div className="row">
          <label>
            Delay (seconds)
            <input type="number" min={0} max={86_400} step={1} value={draft.delay} onChange={(e) => set('delay', e.target.value)} required />
          </label>
        </div>
      );
    case 'exec':
      return (
        <div className="row">
          <label className="wide">
            Command
            <textarea rows={3} className="mono" spellCheck={false} value={draft.command} onChange={(e) => set('command', e.target.value)} required maxLength={10_000} />
          </label>
          <label>
            Timeout (seconds)
            <input type="number" min={1} max={3600} step={1} value={draft.timeout} onChange={(e) => set('timeout', e.target.value)} required />
          </label>
        </div>
      );
    case 'script':
      return <ScriptParams draft={draft} onChange={onChange} />;
    default:
      return <p className="muted">A configuration backup needs no parameters.</p>;
  }
}

/** A saved script and its parameters (defaults filled in when a script is chosen). */
function ScriptParams({ draft, onChange }: { draft: ParamsDraft; onChange: (draft: ParamsDraft) => void }) {
  const ids = useId();
  const scripts = useResource((signal) => api<Script[]>('/scripts', { signal }), []);
  const script = scripts.data?.find((s) => String(s.id) === draft.scriptId);
  return (
    <>
      <div className="row">
        <div className="field">
          <label htmlFor={`${ids}-script`}>Script</label>
          <select
            id={`${ids}-script`}
            value={draft.scriptId}
            onChange={(e) => onChange({ ...draft, scriptId: e.target.value, values: defaultValues(scripts.data?.find((s) => String(s.id) === e.target.value)) })}
            required
          >
            <option value="">{scripts.data ? 'Choose a script' : 'Loading scripts…'}</option>
            {(scripts.data ?? []).map((s) => (
              <option key={s.id} value={s.id}>
                {s.name} ({s.platforms.join(', ')})
              </option>
            ))}
          </select>
        </div>
        <label>
          Timeout (seconds)
          <input type="number" min={1} max={3600} step={1} value={draft.timeout} onChange={(e) => onChange({ ...draft, timeout: e.target.value })} required />
        </label>
      </div>
      {script && <ParameterValues script={script} values={draft.values} onChange={(values) => onChange({ ...draft, values })} />}
    </>
  );
}
