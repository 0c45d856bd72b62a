// Creating or editing an alert rule: name, kind with the fields that kind has, scope (all agents, one
// customer, one agent), the channels it notifies (those it may use: global ones and its customer's),
// reminders and whether it is on. The server's validation errors appear beside the fields they name; on
// any error everything typed stays.
import { useEffect, useId, useRef, useState } from 'react';
import type { ApiMethod, ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import { useSubmit } from '../ui/use-submit';
import { CHANNEL_LABELS, KIND_LABELS, RULE_KINDS, type AlertRule, type Channel, type RuleKind } from './alert-types';
import { FieldError, fieldErrors, invalidProps } from './field-errors';
import { DEFAULT_PARAMS, draftOf, paramsFor, RuleParamsFields, type ParamsDraft } from './rule-params';
import { ALL_AGENTS, scopeDraftOf, scopeOf, ScopePicker, type ScopeDraft } from './scope-picker';
import type { Directory } from './use-directory';
import { FormFooter } from '../ui/form-footer';

interface Props {
  rule: AlertRule | null;
  channels: readonly Channel[];
  directory: Directory;
  onSaved: () => void;
  onCancel: () => void;
}

/** A rule's body less its params: their fields depend on the kind (rule-params.tsx). */
type RuleBody<P extends '/alert-rules' | '/alert-rules/{id}', M extends 'post' | 'put'> = Omit<ApiRequest<P, M & ApiMethod<P>>, 'params'>;

export function RuleForm({ rule, channels, directory, onSaved, onCancel }: Props) {
  const [name, setName] = useState(rule?.name ?? '');
  const [kind, setKind] = useState<RuleKind>(rule?.kind ?? 'agent_offline');
  const [enabled, setEnabled] = useState(rule?.enabled ?? true);
  const [params, setParams] = useState<ParamsDraft>(() => (rule ? draftOf(rule.kind, rule.params) : DEFAULT_PARAMS));
  const [scope, setScope] = useState<ScopeDraft>(() => (rule ? scopeDraftOf(rule) : ALL_AGENTS));
  const [channelIds, setChannelIds] = useState<ReadonlySet<number>>(() => new Set(rule?.channel_ids ?? []));
  const [reminder, setReminder] = useState(rule?.reminder_minutes ? String(rule.reminder_minutes) : '');
  const id = useId();
  const form = useRef<HTMLFormElement>(null);
  // Opened from a row far down the list (a phone): bring the form into view. Never returned from the
  // effect: current Chromium's scrollIntoView answers a promise, which React would call as the cleanup.
  useEffect(() => {
    void form.current?.scrollIntoView({ block: 'nearest' });
  }, []);

  const { busy, error, submit } = useSubmit(async () => {
    const where = scopeOf(scope);
    const body = {
      name: name.trim(),
      kind,
      enabled,
      ...where,
      params: paramsFor(kind, params),
      channel_ids: [...channelIds],
      reminder_minutes: reminder.trim() ? Number(reminder) : null,
    };
    if (rule) await api<AlertRule>(`/alert-rules/${rule.id}`, { method: 'PUT', body: body satisfies RuleBody<'/alert-rules/{id}', 'put'> });
    else await api<AlertRule>('/alert-rules', { method: 'POST', body: body satisfies RuleBody<'/alert-rules', 'post'> });
    onSaved();
  });
  const errors = fieldErrors(error);

  // The channels this rule may use: global ones, and its customer's (an agent's customer for an agent rule).
  const customerId = scope.mode === 'customer' ? Number(scope.customerId) || null : scope.mode === 'agent' ? (directory.agentById.get(scope.agentId)?.customer_id ?? null) : null;
  const usable = channels.filter((c) => c.customer_id === null || c.customer_id === customerId || channelIds.has(c.id));
  const toggle = (channelId: number, on: boolean) =>
    setChannelIds((prev) => {
      const next = new Set(prev);
      if (on) next.add(channelId);
      else next.delete(channelId);
      return next;
    });

  return (
    <form ref={form} className="card alerting-form" onSubmit={(e) => void submit(e)} aria-label={rule ? `Edit rule ${rule.name}` : 'New rule'}>
      <h2>{rule ? `Edit rule “${rule.name}”` : 'New rule'}</h2>
      <div className="row">
        <div className="field grow">
          <label htmlFor={`${id}-name`}>Name</label>
          <input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} placeholder="e.g. Firewall offline" {...invalidProps(errors, 'name', `${id}-name`)} />
          <FieldError errors={errors} field="name" id={`${id}-name`} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-kind`}>Kind</label>
          <select id={`${id}-kind`} value={kind} onChange={(e) => setKind(e.target.value as RuleKind)} {...invalidProps(errors, 'kind', `${id}-kind`)}>
            {RULE_KINDS.map((k) => (
              <option key={k} value={k}>
                {KIND_LABELS[k]}
              </option>
            ))}
          </select>
          <FieldError errors={errors} field="kind" id={`${id}-kind`} />
        </div>
        <label className="inline">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Enabled
        </label>
      </div>
      <RuleParamsFields id={id} kind={kind} draft={params} onChange={setParams} errors={errors} />
      <FieldError errors={errors} field="params" id={`${id}-params`} exact />
      <ScopePicker id={id} draft={scope} onChange={setScope} directory={directory} errors={errors} />
      <fieldset className="plain channel-picks" aria-describedby={`${id}-channels-hint`}>
        <legend>Channels</legend>
        {usable.length === 0 ? (
          <p className="muted" id={`${id}-channels-hint`}>
            No channel this rule may use yet: add one under Channels. Without channels the alert is only listed here.
          </p>
        ) : (
          <>
            {usable.map((c) => (
              <label key={c.id} className="inline">
                <input type="checkbox" checked={channelIds.has(c.id)} onChange={(e) => toggle(c.id, e.target.checked)} />
                <span>
                  {c.name} <span className="muted">({CHANNEL_LABELS[c.type] ?? c.type}{c.customer_id !== null ? `, ${directory.customerById.get(c.customer_id)?.name ?? `customer ${c.customer_id}`}` : ''})</span>
                </span>
              </label>
            ))}
            <p className="muted form-note" id={`${id}-channels-hint`}>
              Global channels, and the rule's customer's own.
            </p>
          </>
        )}
        <FieldError errors={errors} field="channel_ids" id={`${id}-channels`} />
      </fieldset>
      <div className="row">
        <div className="field">
          <label htmlFor={`${id}-reminder`}>Reminder every (minutes, optional)</label>
          <input id={`${id}-reminder`} type="number" min={5} max={10_080} step={1} value={reminder} onChange={(e) => setReminder(e.target.value)} placeholder="off" {...invalidProps(errors, 'reminder_minutes', `${id}-reminder`)} />
          <FieldError errors={errors} field="reminder_minutes" id={`${id}-reminder`} />
        </div>
        <span className="muted hint">While firing and not acknowledged.</span>
      </div>
      <FormFooter busy={busy} error={error} submitLabel={rule ? 'Save rule' : 'Create rule'} onCancel={onCancel} />
    </form>
  );
}
