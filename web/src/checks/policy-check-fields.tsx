// One check of a policy in its form: name, kind, params (JSON, starting from the kind's usual fields),
// interval, timeout, enabled, and remove. Changing the kind of a check whose params were not touched
// brings the new kind's fields; typed params stay.
import { FieldError, invalidProps, type FieldErrors } from '../alerts/field-errors';
import { CHECK_KINDS, KIND_LABELS, PARAM_TEMPLATES, type CheckKind } from './check-types';
import { paramsTextOf, type CheckDraft } from './policy-draft';
import { ParamsErrors } from './params-errors';

interface Props {
  id: string;
  index: number;
  draft: CheckDraft;
  errors: FieldErrors;
  onChange: (draft: CheckDraft) => void;
  onRemove: () => void;
}

export function PolicyCheckFields({ id, index, draft, errors, onChange, onRemove }: Props) {
  const field = (name: string) => `checks.${index}.${name}`;
  const fid = (name: string) => `${id}-check-${draft.key}-${name}`;
  const set = (change: Partial<CheckDraft>) => onChange({ ...draft, ...change });
  const setKind = (kind: CheckKind) => {
    const untouched = draft.paramsText.trim() === paramsTextOf(PARAM_TEMPLATES[draft.kind]) || draft.paramsText.trim() === '';
    set({ kind, ...(untouched ? { paramsText: paramsTextOf(PARAM_TEMPLATES[kind]) } : {}) });
  };
  const title = draft.name.trim() || `Check ${index + 1}`;
  return (
    <fieldset className="card policy-check" data-testid="policy-check">
      <legend>{title}</legend>
      <div className="row">
        <div className="field grow">
          <label htmlFor={fid('name')}>Name</label>
          <input id={fid('name')} value={draft.name} onChange={(e) => set({ name: e.target.value })} required maxLength={255} placeholder="e.g. nginx" {...invalidProps(errors, field('name'), fid('name'))} />
          <FieldError errors={errors} field={field('name')} id={fid('name')} />
        </div>
        <div className="field">
          <label htmlFor={fid('kind')}>Kind</label>
          <select id={fid('kind')} value={draft.kind} onChange={(e) => setKind(e.target.value as CheckKind)} {...invalidProps(errors, field('kind'), fid('kind'))}>
            {CHECK_KINDS.map((k) => (
              <option key={k} value={k}>
                {KIND_LABELS[k]}
              </option>
            ))}
          </select>
          <FieldError errors={errors} field={field('kind')} id={fid('kind')} />
        </div>
        <div className="field">
          <label htmlFor={fid('interval')}>Every (seconds)</label>
          <input id={fid('interval')} type="number" min={10} max={86_400} required value={draft.interval} onChange={(e) => set({ interval: e.target.value })} {...invalidProps(errors, field('interval_seconds'), fid('interval'))} />
          <FieldError errors={errors} field={field('interval_seconds')} id={fid('interval')} />
        </div>
        <div className="field">
          <label htmlFor={fid('timeout')}>Timeout (seconds)</label>
          <input id={fid('timeout')} type="number" min={1} max={300} required value={draft.timeout} onChange={(e) => set({ timeout: e.target.value })} {...invalidProps(errors, field('timeout_seconds'), fid('timeout'))} />
          <FieldError errors={errors} field={field('timeout_seconds')} id={fid('timeout')} />
        </div>
        <label className="inline">
          <input type="checkbox" checked={draft.enabled} onChange={(e) => set({ enabled: e.target.checked })} /> Enabled
        </label>
      </div>
      <div className="field">
        <label htmlFor={fid('params')}>Params (JSON)</label>
        <textarea id={fid('params')} className="mono params-json" rows={Math.min(10, draft.paramsText.split('\n').length + 1)} spellCheck={false} value={draft.paramsText} onChange={(e) => set({ paramsText: e.target.value })} {...invalidProps(errors, field('params'), fid('params'))} />
        <ParamsErrors errors={errors} field={field('params')} id={fid('params')} />
      </div>
      <div className="row">
        <button type="button" className="danger-outline" onClick={onRemove}>
          Remove check “{title}”
        </button>
      </div>
    </fieldset>
  );
}
