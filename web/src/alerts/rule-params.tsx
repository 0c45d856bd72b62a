// A rule kind's params as form fields (only the ones that kind has, exactly as the API defines them,
// with its defaults filled in), the params object they make, and a one-line description for the list.
// The draft holds every kind's fields, so switching kinds back and forth keeps what was typed.
import { FieldError, invalidProps, type FieldErrors } from './field-errors';
import { METRIC_LABEL_HINT, METRIC_LABELS, METRICS, OPERATORS, type MetricName, type Operator, type RuleKind } from './alert-types';

export interface ParamsDraft {
  minutes: string;
  status: 'offline' | 'stale';
  metric: MetricName;
  label: string;
  operator: Operator;
  threshold: string;
  forSeconds: string;
  recoveryThreshold: string;
  recoverySeconds: string;
  certDays: string;
  taskError: boolean;
  taskWarning: boolean;
  backupDays: string;
  hours: string;
  checkStates: { warning: boolean; critical: boolean; unknown: boolean };
  checkPolicyId: string;
}

export const DEFAULT_PARAMS: ParamsDraft = {
  minutes: '5',
  status: 'offline',
  metric: 'cpu_usage',
  label: '',
  operator: '>',
  threshold: '90',
  forSeconds: '300',
  recoveryThreshold: '',
  recoverySeconds: '',
  certDays: '14',
  taskError: true,
  taskWarning: true,
  backupDays: '7',
  hours: '24',
  checkStates: { warning: false, critical: true, unknown: false },
  checkPolicyId: '',
};

const str = (v: unknown, fallback: string) => (typeof v === 'number' || typeof v === 'string' ? String(v) : fallback);
const optionalNumber = (s: string) => (s.trim() === '' ? undefined : Number(s));

/** A stored rule's params as a draft (missing fields take the defaults). */
export function draftOf(kind: RuleKind, p: Record<string, unknown>): ParamsDraft {
  const d = { ...DEFAULT_PARAMS };
  switch (kind) {
    case 'agent_offline':
      return { ...d, minutes: str(p.minutes, d.minutes), status: p.status === 'stale' ? 'stale' : 'offline' };
    case 'metric_threshold':
      return {
        ...d,
        metric: METRICS.find((m) => m === p.metric) ?? d.metric,
        label: str(p.label, ''),
        operator: OPERATORS.find((o) => o === p.operator) ?? d.operator,
        threshold: str(p.threshold, d.threshold),
        forSeconds: str(p.for_seconds, d.forSeconds),
        recoveryThreshold: str(p.recovery_threshold, ''),
        recoverySeconds: str(p.recovery_seconds, ''),
      };
    case 'certificate_expiry':
      return { ...d, certDays: str(p.days, d.certDays) };
    case 'task_failed': {
      const statuses = Array.isArray(p.statuses) ? p.statuses : ['error', 'completed_with_warning'];
      return { ...d, taskError: statuses.includes('error'), taskWarning: statuses.includes('completed_with_warning') };
    }
    case 'backup_age':
      return { ...d, backupDays: str(p.days, d.backupDays) };
    case 'update_pending':
      return { ...d, hours: str(p.hours, d.hours) };
    case 'check_state': {
      const states = Array.isArray(p.states) ? p.states : ['critical'];
      return {
        ...d,
        checkStates: { warning: states.includes('warning'), critical: states.includes('critical'), unknown: states.includes('unknown') },
        checkPolicyId: str(p.policy_id, ''),
        forSeconds: str(p.for_seconds, d.forSeconds),
      };
    }
  }
}

export function paramsFor(kind: RuleKind, d: ParamsDraft): Record<string, unknown> {
  switch (kind) {
    case 'agent_offline':
      return { minutes: Number(d.minutes), status: d.status };
    case 'metric_threshold': {
      const p: Record<string, unknown> = { metric: d.metric, operator: d.operator, threshold: Number(d.threshold), for_seconds: Number(d.forSeconds) };
      if (d.label.trim()) p.label = d.label.trim();
      const recoveryThreshold = optionalNumber(d.recoveryThreshold);
      if (recoveryThreshold !== undefined) p.recovery_threshold = recoveryThreshold;
      const recoverySeconds = optionalNumber(d.recoverySeconds);
      if (recoverySeconds !== undefined) p.recovery_seconds = recoverySeconds;
      return p;
    }
    case 'certificate_expiry':
      return { days: Number(d.certDays) };
    case 'task_failed':
      return { statuses: [...(d.taskError ? ['error'] : []), ...(d.taskWarning ? ['completed_with_warning'] : [])] };
    case 'backup_age':
      return { days: Number(d.backupDays) };
    case 'update_pending':
      return { hours: Number(d.hours) };
    case 'check_state': {
      const p: Record<string, unknown> = { states: (['warning', 'critical', 'unknown'] as const).filter((s) => d.checkStates[s]), for_seconds: Number(d.forSeconds) };
      const policyId = optionalNumber(d.checkPolicyId);
      if (policyId !== undefined) p.policy_id = policyId;
      return p;
    }
  }
}

/** What a rule watches, in a few words: "offline for 5 min", "disk_used_percent on / > 90 for 300 s". */
export function describeParams(kind: string, p: Record<string, unknown>): string {
  switch (kind) {
    case 'agent_offline':
      return `${p.status === 'stale' ? 'stale' : 'offline'} for ${str(p.minutes, '5')} min`;
    case 'metric_threshold': {
      const on = typeof p.label === 'string' && p.label ? ` on ${p.label}` : '';
      const recovery = p.recovery_threshold !== undefined || p.recovery_seconds !== undefined ? `; clears past ${str(p.recovery_threshold, str(p.threshold, ''))} for ${str(p.recovery_seconds, str(p.for_seconds, '300'))} s` : '';
      return `${str(p.metric, '?')}${on} ${str(p.operator, '>')} ${str(p.threshold, '?')} for ${str(p.for_seconds, '300')} s${recovery}`;
    }
    case 'certificate_expiry':
      return `expires within ${str(p.days, '14')} days`;
    case 'task_failed':
      return `run ends with ${(Array.isArray(p.statuses) ? p.statuses : ['error', 'completed_with_warning']).join(' or ')}`;
    case 'backup_age':
      return `newest backup older than ${str(p.days, '7')} days`;
    case 'update_pending':
      return `requested update not applied after ${str(p.hours, '24')} h`;
    case 'check_state':
      return `check ${(Array.isArray(p.states) ? p.states : ['critical']).join(' or ')} for ${str(p.for_seconds, '300')} s${p.policy_id !== undefined ? ` (policy ${str(p.policy_id, '')})` : ''}`;
    default:
      return '';
  }
}

interface NumberFieldProps {
  id: string;
  label: string;
  field: string;
  value: string;
  onChange: (v: string) => void;
  errors: FieldErrors;
  min?: number;
  max?: number;
  step?: number | 'any';
  required?: boolean;
  placeholder?: string;
}

function NumberField({ id, label, field, value, onChange, errors, min, max, step = 1, required = true, placeholder }: NumberFieldProps) {
  const fid = `${id}-${field.replace(/\W/g, '-')}`;
  return (
    <div className="field">
      <label htmlFor={fid}>{label}</label>
      <input id={fid} type="number" min={min} max={max} step={step} value={value} onChange={(e) => onChange(e.target.value)} required={required} placeholder={placeholder} {...invalidProps(errors, field, fid)} />
      <FieldError errors={errors} field={field} id={fid} />
    </div>
  );
}

export function RuleParamsFields({ id, kind, draft, onChange, errors }: { id: string; kind: RuleKind; draft: ParamsDraft; onChange: (d: ParamsDraft) => void; errors: FieldErrors }) {
  const set = <K extends keyof ParamsDraft>(key: K, value: ParamsDraft[K]) => onChange({ ...draft, [key]: value });
  const common = { id, errors };
  switch (kind) {
    case 'agent_offline':
      return (
        <div className="row">
          <NumberField {...common} label="Minutes without a heartbeat" field="params.minutes" value={draft.minutes} onChange={(v) => set('minutes', v)} min={1} max={10_080} />
          <div className="field">
            <label htmlFor={`${id}-status`}>Status</label>
            <select id={`${id}-status`} value={draft.status} onChange={(e) => set('status', e.target.value as ParamsDraft['status'])} {...invalidProps(errors, 'params.status', `${id}-status`)}>
              <option value="offline">offline (over 5 min without a heartbeat)</option>
              <option value="stale">stale (over 2 min)</option>
            </select>
            <FieldError errors={errors} field="params.status" id={`${id}-status`} />
          </div>
        </div>
      );
    case 'metric_threshold':
      return (
        <>
          <div className="row">
            <div className="field">
              <label htmlFor={`${id}-metric`}>Metric</label>
              <select id={`${id}-metric`} value={draft.metric} onChange={(e) => set('metric', e.target.value as MetricName)} {...invalidProps(errors, 'params.metric', `${id}-metric`)}>
                {METRICS.map((m) => (
                  <option key={m} value={m}>
                    {m} — {METRIC_LABELS[m]}
                  </option>
                ))}
              </select>
              <FieldError errors={errors} field="params.metric" id={`${id}-metric`} />
            </div>
            <div className="field">
              <label htmlFor={`${id}-label`}>Label (optional)</label>
              <input id={`${id}-label`} value={draft.label} maxLength={255} onChange={(e) => set('label', e.target.value)} placeholder={METRIC_LABEL_HINT[draft.metric] ?? 'each label separately'} {...invalidProps(errors, 'params.label', `${id}-label`)} />
              <FieldError errors={errors} field="params.label" id={`${id}-label`} />
            </div>
          </div>
          <div className="row">
            <div className="field">
              <label htmlFor={`${id}-operator`}>Operator</label>
              <select id={`${id}-operator`} value={draft.operator} onChange={(e) => set('operator', e.target.value as Operator)}>
                {OPERATORS.map((o) => (
                  <option key={o} value={o}>
                    {o}
                  </option>
                ))}
              </select>
            </div>
            <NumberField {...common} label="Threshold" field="params.threshold" value={draft.threshold} onChange={(v) => set('threshold', v)} step="any" />
            <NumberField {...common} label="For (seconds)" field="params.for_seconds" value={draft.forSeconds} onChange={(v) => set('forSeconds', v)} min={0} max={86_400} />
          </div>
          <div className="row">
            <NumberField {...common} label="Recovery threshold (optional)" field="params.recovery_threshold" value={draft.recoveryThreshold} onChange={(v) => set('recoveryThreshold', v)} step="any" required={false} placeholder="the threshold" />
            <NumberField {...common} label="Recovery for (seconds, optional)" field="params.recovery_seconds" value={draft.recoverySeconds} onChange={(v) => set('recoverySeconds', v)} min={0} max={86_400} required={false} placeholder="as above" />
            <span className="muted hint">E.g. fire above 90 for 300 s, resolve once below 80 for 300 s.</span>
          </div>
        </>
      );
    case 'certificate_expiry':
      return (
        <div className="row">
          <NumberField {...common} label="Days before expiry" field="params.days" value={draft.certDays} onChange={(v) => set('certDays', v)} min={1} max={365} />
        </div>
      );
    case 'task_failed':
      return (
        <fieldset className="row plain">
          <legend>Run outcomes that fire</legend>
          <label className="inline">
            <input type="checkbox" checked={draft.taskError} onChange={(e) => set('taskError', e.target.checked)} /> error
          </label>
          <label className="inline">
            <input type="checkbox" checked={draft.taskWarning} onChange={(e) => set('taskWarning', e.target.checked)} /> completed with warning
          </label>
          <FieldError errors={errors} field="params.statuses" id={`${id}-params-statuses`} />
        </fieldset>
      );
    case 'backup_age':
      return (
        <div className="row">
          <NumberField {...common} label="Newest backup older than (days)" field="params.days" value={draft.backupDays} onChange={(v) => set('backupDays', v)} min={1} max={365} />
        </div>
      );
    case 'update_pending':
      return (
        <div className="row">
          <NumberField {...common} label="Not applied after (hours)" field="params.hours" value={draft.hours} onChange={(v) => set('hours', v)} min={1} max={8_760} />
        </div>
      );
    case 'check_state':
      return (
        <>
          <fieldset className="row plain">
            <legend>Check states that fire</legend>
            {(['critical', 'warning', 'unknown'] as const).map((state) => (
              <label key={state} className="inline">
                <input type="checkbox" checked={draft.checkStates[state]} onChange={(e) => set('checkStates', { ...draft.checkStates, [state]: e.target.checked })} /> {state}
              </label>
            ))}
            <FieldError errors={errors} field="params.states" id={`${id}-params-states`} />
          </fieldset>
          <div className="row">
            <NumberField {...common} label="For (seconds)" field="params.for_seconds" value={draft.forSeconds} onChange={(v) => set('forSeconds', v)} min={0} max={86_400} />
            <NumberField {...common} label="Only policy (id, optional)" field="params.policy_id" value={draft.checkPolicyId} onChange={(v) => set('checkPolicyId', v)} min={1} required={false} placeholder="every check" />
          </div>
        </>
      );
  }
}
