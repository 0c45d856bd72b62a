// Creating or editing a check policy: name, description, who it applies to (customers, tags,
// platforms) and its checks. Saving replaces the whole policy (PUT); checks keep their ids, so their
// states and history stay. The server's validation errors appear beside the fields they name
// (`checks.1.params.port` under the second check's params); on any error everything typed stays.
import { useEffect, useId, useRef, useState } from 'react';
import { api } from '../api/client';
import type { Customer } from '../api/types';
import { FieldError, fieldErrors, invalidProps } from '../alerts/field-errors';
import { PLATFORM_LABELS } from '../api/types';
import { useSubmit } from '../ui/use-submit';
import { PLATFORMS, type Policy } from './check-types';
import { PolicyCheckFields } from './policy-check-fields';
import { newCheckDraft, policyBodyOf, policyDraftOf, type PolicyDraft } from './policy-draft';
import { FormFooter } from '../ui/form-footer';

interface Props {
  policy: Policy | null;
  customers: readonly Customer[];
  onSaved: () => void;
  onCancel: () => void;
}

export function PolicyForm({ policy, customers, onSaved, onCancel }: Props) {
  const [draft, setDraft] = useState<PolicyDraft>(() => policyDraftOf(policy));
  const id = useId();
  const form = useRef<HTMLFormElement>(null);
  // Opened from a row far down the list: bring the form into view (not returned: see rule-form.tsx).
  useEffect(() => {
    void form.current?.scrollIntoView({ block: 'nearest' });
  }, []);
  const { busy, error, submit } = useSubmit(async () => {
    const body = policyBodyOf(draft);
    if (policy) await api<Policy>(`/check-policies/${policy.id}`, { method: 'PUT', body });
    else await api<Policy>('/check-policies', { method: 'POST', body });
    onSaved();
  });
  const errors = fieldErrors(error);
  const set = (change: Partial<PolicyDraft>) => setDraft((d) => ({ ...d, ...change }));
  const togglePlatform = (platform: PolicyDraft['platforms'][number], on: boolean) =>
    setDraft((d) => ({ ...d, platforms: on ? [...d.platforms, platform] : d.platforms.filter((p) => p !== platform) }));

  return (
    <form ref={form} className="card alerting-form policy-form" onSubmit={(e) => void submit(e)} aria-label={policy ? `Edit policy ${policy.name}` : 'New policy'}>
      <h2>{policy ? `Edit policy “${policy.name}”` : 'New policy'}</h2>
      <div className="row">
        <div className="field grow">
          <label htmlFor={`${id}-name`}>Name</label>
          <input id={`${id}-name`} value={draft.name} onChange={(e) => set({ name: e.target.value })} required maxLength={100} placeholder="e.g. Web servers" {...invalidProps(errors, 'name', `${id}-name`)} />
          <FieldError errors={errors} field="name" id={`${id}-name`} />
        </div>
        <label className="inline">
          <input type="checkbox" checked={draft.enabled} onChange={(e) => set({ enabled: e.target.checked })} /> Enabled
        </label>
      </div>
      <div className="field">
        <label htmlFor={`${id}-description`}>Description (optional)</label>
        <input id={`${id}-description`} value={draft.description} onChange={(e) => set({ description: e.target.value })} maxLength={1000} {...invalidProps(errors, 'description', `${id}-description`)} />
        <FieldError errors={errors} field="description" id={`${id}-description`} />
      </div>
      <p className="muted form-note">Applies to agents that match every list filled in below; with all three empty it applies to no agent.</p>
      <div className="row">
        <div className="field">
          <label htmlFor={`${id}-customers`}>Customers (none chosen: any)</label>
          <select
            id={`${id}-customers`}
            multiple
            size={Math.min(5, Math.max(2, customers.length))}
            value={draft.customerIds.map(String)}
            onChange={(e) => set({ customerIds: [...e.target.selectedOptions].map((o) => Number(o.value)) })}
            {...invalidProps(errors, 'customer_ids', `${id}-customers`)}
          >
            {customers.map((c) => (
              <option key={c.id} value={c.id}>
                {c.number} {c.name}
              </option>
            ))}
          </select>
          <FieldError errors={errors} field="customer_ids" id={`${id}-customers`} />
        </div>
        <div className="field grow">
          <label htmlFor={`${id}-tags`}>Tags, comma-separated (empty: any)</label>
          <input id={`${id}-tags`} value={draft.tags} onChange={(e) => set({ tags: e.target.value })} placeholder="e.g. web, lob" {...invalidProps(errors, 'tags', `${id}-tags`)} />
          <FieldError errors={errors} field="tags" id={`${id}-tags`} />
        </div>
        <fieldset className="plain">
          <legend>Platforms (none: any)</legend>
          {PLATFORMS.map((p) => (
            <label key={p} className="inline">
              <input type="checkbox" checked={draft.platforms.includes(p)} onChange={(e) => togglePlatform(p, e.target.checked)} /> {PLATFORM_LABELS[p]} <span className="muted">({p})</span>
            </label>
          ))}
          <FieldError errors={errors} field="platforms" id={`${id}-platforms`} />
        </fieldset>
      </div>
      <h3>Checks</h3>
      <FieldError errors={errors} field="checks" id={`${id}-checks`} exact />
      {draft.checks.map((check, index) => (
        <PolicyCheckFields
          key={check.key}
          id={id}
          index={index}
          draft={check}
          errors={errors}
          onChange={(changed) => setDraft((d) => ({ ...d, checks: d.checks.map((c) => (c.key === changed.key ? changed : c)) }))}
          onRemove={() => setDraft((d) => ({ ...d, checks: d.checks.filter((c) => c.key !== check.key) }))}
        />
      ))}
      <div className="row">
        <button type="button" onClick={() => setDraft((d) => ({ ...d, checks: [...d.checks, newCheckDraft()] }))}>
          Add check
        </button>
      </div>
      <FormFooter busy={busy} error={error} submitLabel={policy ? 'Save policy' : 'Create policy'} onCancel={onCancel} />
    </form>
  );
}
