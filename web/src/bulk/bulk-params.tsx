// The fields each bulk action takes, as its REST command does: a command and timeout (exec), a library
// script with its parameters (script), the update's options, the reboot's delay; none for the others.
import { useEffect, useId } from 'react';
import { PLATFORM_LABELS } from '../api/types';
import { ParameterValues } from '../scripts/parameter-values';
import { defaultValues, SHELL_LABELS, type Script } from '../scripts/script-types';
import type { BulkActionKind } from './bulk-types';

export interface ParamsDraft {
  command: string;
  timeout: number;
  scriptId: string;
  values: Record<string, string>;
  reboot: boolean;
  securityOnly: boolean;
  delay: number;
}

export const EMPTY_DRAFT: ParamsDraft = { command: '', timeout: 60, scriptId: '', values: {}, reboot: false, securityOnly: false, delay: 0 };

/** The `params` of POST /bulk-actions for an action from the form's fields. */
export function paramsFor(action: BulkActionKind, d: ParamsDraft): Record<string, unknown> | undefined {
  switch (action) {
    case 'exec':
      return { command: d.command, timeout: d.timeout };
    case 'script':
      return { script_id: Number(d.scriptId), parameters: d.values, timeout: d.timeout };
    case 'update':
      return { reboot: d.reboot, security_only: d.securityOnly };
    case 'reboot':
      return { delay: d.delay };
    default:
      return undefined;
  }
}

interface Props {
  action: BulkActionKind;
  draft: ParamsDraft;
  onChange: (draft: ParamsDraft) => void;
  scripts: readonly Script[] | undefined;
}

export function BulkParams({ action, draft, onChange, scripts }: Props) {
  const ids = useId();
  const set = (change: Partial<ParamsDraft>) => onChange({ ...draft, ...change });
  const script = scripts?.find((s) => String(s.id) === draft.scriptId);
  // A newly chosen script starts from its defaults.
  useEffect(() => {
    if (script) onChange({ ...draft, values: defaultValues(script) });
  }, [script?.id]); // only when another script is chosen, not on every change of the draft

  const timeout = (
    <label>
      Timeout (seconds)
      <input type="number" min={1} max={3600} value={draft.timeout} onChange={(e) => set({ timeout: Number(e.target.value) })} required />
    </label>
  );
  switch (action) {
    case 'exec':
      return (
        <>
          <label>
            Command
            <textarea name="command" rows={3} className="mono" value={draft.command} onChange={(e) => set({ command: e.target.value })} required maxLength={10_000} spellCheck={false} />
          </label>
          <div className="row">{timeout}</div>
        </>
      );
    case 'script':
      return (
        <>
          <div className="row">
            <div className="field">
              <label htmlFor={`${ids}-script`}>Script</label>
              <select id={`${ids}-script`} value={draft.scriptId} onChange={(e) => set({ scriptId: e.target.value })} required>
                <option value="">{scripts ? 'Choose a script' : 'Loading scripts…'}</option>
                {(scripts ?? []).map((s) => (
                  <option key={s.id} value={s.id}>
                    {s.name} ({SHELL_LABELS[s.shell]}; {s.platforms.map((p) => PLATFORM_LABELS[p]).join(', ')})
                  </option>
                ))}
              </select>
            </div>
            {timeout}
          </div>
          {script && <ParameterValues script={script} values={draft.values} onChange={(values) => set({ values })} />}
          {script && <p className="muted">Agents on a platform the script does not run on are left out; the form names them before it starts.</p>}
        </>
      );
    case 'update':
      return (
        <div className="row">
          <label className="inline">
            <input type="checkbox" checked={draft.securityOnly} onChange={(e) => set({ securityOnly: e.target.checked })} /> Security updates only
          </label>
          <label className="inline">
            <input type="checkbox" checked={draft.reboot} onChange={(e) => set({ reboot: e.target.checked })} /> Reboot when needed
          </label>
        </div>
      );
    case 'reboot':
      return (
        <div className="row">
          <label>
            Delay (seconds)
            <input type="number" min={0} max={86_400} value={draft.delay} onChange={(e) => set({ delay: Number(e.target.value) })} />
          </label>
        </div>
      );
    case 'update_check':
      return <p className="muted">Each agent reports which updates are available.</p>;
    case 'request_update':
      return <p className="muted">Each agent's updater installs the latest firmware at its next check; no connection is needed.</p>;
  }
}
