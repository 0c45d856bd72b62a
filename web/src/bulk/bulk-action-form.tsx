// One action on many agents (issue 33, Build 2): the form any page puts beside a set of agents. `target`
// is the API's target as is ({agent_ids: [...]}, {customer_id: 5}, a filter); the form adds the action,
// its parameters and how long to wait for agents that are not connected, then opens the action's page
// (/bulk/{id}) to follow it. Reboots and updates ask first: they interrupt whoever works on the devices.
import { useId, useState } from 'react';
import type { ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import { navigate } from '../router';
import type { Script } from '../scripts/script-types';
import { useSubmit } from '../ui/use-submit';
import { ErrorBanner } from '../ui/widgets';
import { useResource } from '../use-resource';
import { BulkParams, EMPTY_DRAFT, paramsFor, type ParamsDraft } from './bulk-params';
import { ACTION_LABELS, BULK_ACTIONS, type BulkActionKind, type BulkActionWithResults, type BulkTarget } from './bulk-types';
import { ScriptPlatformNote, useScriptPreview } from './script-platform-note';
import './bulk.css';

const DISRUPTIVE: ReadonlySet<BulkActionKind> = new Set(['update', 'reboot']);

export interface BulkActionFormProps {
  target: BulkTarget;
  /** Whom the target names, in words: "all agents of Bäckerei Sonnenschein", "3 selected agents". */
  targetLabel: string;
  /** Called with the new action before its page opens. */
  onCreated?: (action: BulkActionWithResults) => void;
}

export function BulkActionForm({ target, targetLabel, onCreated }: BulkActionFormProps) {
  const [action, setAction] = useState<BulkActionKind>('exec');
  const [draft, setDraft] = useState<ParamsDraft>(EMPTY_DRAFT);
  const [waitHours, setWaitHours] = useState(24);
  const [asking, setAsking] = useState(false);
  // The library only matters once "Run a script" is chosen.
  const scripts = useResource((signal) => (action === 'script' ? api<Script[]>('/scripts', { signal }) : Promise.resolve(undefined)), [action === 'script']);
  const ids = useId();
  // A script may not apply to every agent of the target: say so before it starts, and skip those.
  const preview = useScriptPreview(target, action === 'script' ? draft.scriptId : '').data;
  const skipping = action === 'script' && (preview?.unsupported_count ?? 0) > 0;
  const runnable = !skipping || preview!.agents > preview!.unsupported_count;

  const { busy, error, submit } = useSubmit(async () => {
    setAsking(false);
    const body = { action, params: paramsFor(action, draft), target, wait_hours: waitHours, ...(skipping ? { skip_unsupported: true } : {}) } satisfies ApiRequest<'/bulk-actions', 'post'>;
    const made = await api<BulkActionWithResults>('/bulk-actions', { method: 'POST', body });
    onCreated?.(made);
    navigate(`/bulk/${made.id}`);
  });
  const confirmFirst = DISRUPTIVE.has(action);

  return (
    <form
      className="card bulk-form"
      aria-label="Bulk action"
      onSubmit={(e) => {
        if (confirmFirst && !asking) {
          e.preventDefault();
          setAsking(true);
          return;
        }
        void submit(e);
      }}
    >
      <p className="muted">
        On <strong>{targetLabel}</strong>. Agents that are connected run it at once; the others when they connect, within the wait below.
      </p>
      <div className="row">
        <div className="field">
          <label htmlFor={`${ids}-action`}>Action</label>
          <select
            id={`${ids}-action`}
            value={action}
            onChange={(e) => {
              setAction(e.target.value as BulkActionKind);
              setAsking(false);
            }}
          >
            {BULK_ACTIONS.map((a) => (
              <option key={a} value={a}>
                {ACTION_LABELS[a]}
              </option>
            ))}
          </select>
        </div>
        {action !== 'request_update' && (
          <label>
            Wait for agents (hours)
            <input type="number" min={0} max={168} value={waitHours} onChange={(e) => setWaitHours(Number(e.target.value))} required />
          </label>
        )}
      </div>
      <ErrorBanner error={scripts.error} />
      <BulkParams action={action} draft={draft} onChange={setDraft} scripts={scripts.data} />
      {action === 'script' && preview && <ScriptPlatformNote preview={preview} />}
      <div className="row">
        {asking ? (
          <span className="confirm" role="group" aria-label={`${ACTION_LABELS[action]} on ${targetLabel}?`}>
            <span>
              {ACTION_LABELS[action]} on {targetLabel}?
            </span>
            <button type="submit" className="danger" disabled={busy}>
              Yes, start
            </button>
            <button type="button" onClick={() => setAsking(false)}>
              Cancel
            </button>
          </span>
        ) : (
          <button type="submit" className={confirmFirst ? 'danger-outline' : 'primary'} disabled={busy || !runnable}>
            {busy ? 'Starting…' : skipping && runnable ? `Start on ${preview!.agents - preview!.unsupported_count} agents` : 'Start bulk action'}
          </button>
        )}
      </div>
      <ErrorBanner error={error} />
    </form>
  );
}
