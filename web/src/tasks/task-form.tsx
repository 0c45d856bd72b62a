// The "New task" form: an agent or a group (customer, platform, tag), a kind with its params, once (at a local time, sent as UTC) or
// recurring (a cron expression in UTC with a live preview), and an optional webhook. On success the new
// task's page opens; on an error everything typed stays for the user to correct.
import { useId, useState } from 'react';
import type { ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import type { Agent, Customer } from '../api/types';
import { navigate } from '../router';
import { useSubmit } from '../ui/use-submit';
import { ErrorBanner } from '../ui/widgets';
import { scheduleBody, ScheduleFields, type ScheduleDraft } from './schedule-fields';
import { EMPTY_PARAMS, KindParams, paramsFor, type ParamsDraft } from './kind-params';
import { KIND_LABELS, offeredKinds, type Task, type TaskKind } from './task-types';
import { EMPTY_TARGET, TargetFields, targetFields, type TargetDraft } from './task-target';
import { useResource } from '../use-resource';
import './tasks.css';

const UPDATE_KINDS: ReadonlySet<TaskKind> = new Set(['update', 'security_update', 'dist_upgrade']);

/** A Date as a datetime-local value ("2025-05-01T14:30"), in the browser's time zone. */
export function localInputValue(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

export function TaskForm({ agents }: { agents: readonly Agent[] | undefined }) {
  const [target, setTarget] = useState<TargetDraft>(EMPTY_TARGET);
  const customers = useResource((signal) => api<Customer[]>('/customers', { signal }), []);
  const [kind, setKind] = useState<TaskKind>('exec');
  const [draft, setDraft] = useState<ParamsDraft>(EMPTY_PARAMS);
  const [name, setName] = useState('');
  const [when, setWhen] = useState<ScheduleDraft>(() => ({ schedule: 'once', runAt: localInputValue(new Date()), cron: '' }));
  const [webhookUrl, setWebhookUrl] = useState('');
  const [healthCheck, setHealthCheck] = useState('600');
  const ids = useId();
  const platformOf = (draft: TargetDraft) => agents?.find((a) => a.id === draft.agentId)?.platform;
  const kinds = offeredKinds(target.mode, platformOf(target));

  const { busy, error, submit } = useSubmit(async () => {
    const body: ApiRequest<'/tasks', 'post'> = { ...targetFields(target), kind, params: paramsFor(kind, draft) };
    if (name.trim()) body.name = name.trim();
    Object.assign(body, scheduleBody(when));
    if (webhookUrl.trim()) body.webhook_url = webhookUrl.trim();
    if (UPDATE_KINDS.has(kind) && target.mode === 'agent') body.health_check_timeout = Number(healthCheck);
    const task = await api<Task>('/tasks', { method: 'POST', body });
    navigate(`/tasks/${task.id}`);
  });

  return (
    <form className="card task-create" onSubmit={(e) => void submit(e)} aria-label="New task">
      <h2>New task</h2>
      <TargetFields
        draft={target}
        onChange={(next) => {
          setTarget(next);
          // A group runs only some kinds, and backups are for firewalls: keep the choice valid rather than
          // let the server refuse it.
          if (!offeredKinds(next.mode, platformOf(next)).includes(kind)) setKind('exec');
        }}
        agents={agents}
        customers={customers.data ?? []}
      />
      <div className="row">
        <div className="field">
          <label htmlFor={`${ids}-kind`}>Kind</label>
          <select id={`${ids}-kind`} value={kind} onChange={(e) => setKind(e.target.value as TaskKind)}>
            {kinds.map((k) => (
              <option key={k} value={k}>
                {KIND_LABELS[k]}
              </option>
            ))}
          </select>
        </div>
        <label>
          Name (optional)
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={200} placeholder="Defaults to kind and agent" />
        </label>
      </div>
      <KindParams kind={kind} draft={draft} onChange={setDraft} />
      {UPDATE_KINDS.has(kind) && target.mode === 'agent' && (
        <div className="row">
          <label>
            Health check timeout (seconds)
            <input type="number" min={1} max={86_400} step={1} value={healthCheck} onChange={(e) => setHealthCheck(e.target.value)} required />
          </label>
          <span className="muted">How long the run waits for the agent to come back before it warns.</span>
        </div>
      )}
      <ScheduleFields
        draft={when}
        onChange={setWhen}
        creating={true}
      />
      <div className="row">
        <label className="wide">
          Webhook URL (optional)
          <input type="url" value={webhookUrl} onChange={(e) => setWebhookUrl(e.target.value)} maxLength={2000} placeholder="https://example.com/hooks/rmm" />
        </label>
      </div>
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create task'}
        </button>
      </div>
      <ErrorBanner error={error} />
    </form>
  );
}
