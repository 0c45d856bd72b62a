// How one agent differs from its policy for one check: left out, params merged over the policy's (a
// threshold, a host) or another interval. Saving sends the whole override; removing it returns the
// check to its policy. An excluded check leaves the agent's set, so excluded ones are listed apart
// (ExcludedChecks), each with the way back.
import { useId, useState } from 'react';
import { api } from '../api/client';
import { FieldError, fieldErrors, invalidProps } from '../alerts/field-errors';
import { useActionError } from '../ui/use-action-error';
import { useSubmit } from '../ui/use-submit';
import { ConfirmButton, ErrorBanner } from '../ui/widgets';
import type { AgentCheck, CheckOverride } from './check-types';
import { ParamsErrors } from './params-errors';
import { parseParamsText } from './policy-draft';

const overridePath = (agentId: string, checkId: string) => `/agents/${encodeURIComponent(agentId)}/check-overrides/${encodeURIComponent(checkId)}`;

interface Props {
  agentId: string;
  check: AgentCheck;
  override: CheckOverride | undefined;
  onChanged: () => void;
}

export function OverrideForm({ agentId, check, override, onChanged }: Props) {
  const [excluded, setExcluded] = useState(override?.excluded ?? false);
  const [paramsText, setParamsText] = useState(override && Object.keys(override.params).length > 0 ? JSON.stringify(override.params, null, 2) : '');
  const [interval, setInterval] = useState(override?.interval_seconds ? String(override.interval_seconds) : '');
  const id = useId();
  const { busy, error, submit } = useSubmit(async () => {
    const params = parseParamsText(paramsText, 'params');
    await api(overridePath(agentId, check.id), { method: 'PUT', body: { excluded, params, interval_seconds: interval.trim() ? Number(interval) : null } });
    onChanged();
  });
  const removal = useActionError();
  const remove = () =>
    removal.guard(async () => {
      await api(overridePath(agentId, check.id), { method: 'DELETE' });
      onChanged();
    });
  const errors = fieldErrors(error);
  return (
    <form className="card override-form" onSubmit={(e) => void submit(e)} aria-label={`Override of ${check.name}`}>
      <h3>Override on this agent</h3>
      <p className="muted form-note">{override ? 'This agent differs from the policy for this check.' : 'This agent runs the check as its policy says.'}</p>
      <label className="inline">
        <input type="checkbox" checked={excluded} onChange={(e) => setExcluded(e.target.checked)} /> Leave this check out on this agent
      </label>
      <div className="field">
        <label htmlFor={`${id}-params`}>Params merged over the policy's (JSON, optional)</label>
        <textarea id={`${id}-params`} className="mono params-json" rows={4} spellCheck={false} value={paramsText} onChange={(e) => setParamsText(e.target.value)} placeholder='e.g. {"crit_percent": 98}' {...invalidProps(errors, 'params', `${id}-params`)} />
        <ParamsErrors errors={errors} field="params" id={`${id}-params`} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-interval`}>Every (seconds; empty: the policy's {check.interval_seconds})</label>
        <input id={`${id}-interval`} type="number" min={10} max={86_400} value={interval} onChange={(e) => setInterval(e.target.value)} {...invalidProps(errors, 'interval_seconds', `${id}-interval`)} />
        <FieldError errors={errors} field="interval_seconds" id={`${id}-interval`} />
      </div>
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : 'Save override'}
        </button>
        {override && <ConfirmButton label="Remove override" question="Run this check as its policy says again?" busyLabel="Removing…" onConfirm={remove} />}
      </div>
      <ErrorBanner error={error ?? removal.error} />
    </form>
  );
}

/** Checks this agent leaves out: not in its set any more, so listed here with the way back. */
export function ExcludedChecks({ agentId, overrides, onChanged }: { agentId: string; overrides: readonly CheckOverride[]; onChanged: () => void }) {
  const { error, guard } = useActionError();
  const excluded = overrides.filter((o) => o.excluded);
  if (excluded.length === 0) return null;
  const include = (o: CheckOverride) =>
    guard(async () => {
      await api(overridePath(agentId, o.check_id), { method: 'DELETE' });
      onChanged();
    });
  return (
    <section className="card excluded-checks" aria-label="Checks left out on this agent" data-testid="excluded-checks">
      <h3>Left out on this agent</h3>
      <ErrorBanner error={error} />
      <ul>
        {excluded.map((o) => (
          <li key={o.check_id}>
            {o.check_name}{' '}
            <ConfirmButton label="Include again" question={`Run ${o.check_name} on this agent again?`} busyLabel="Including…" onConfirm={() => include(o)} />
          </li>
        ))}
      </ul>
    </section>
  );
}
