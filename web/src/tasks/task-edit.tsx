// Editing a task (PATCH /tasks/{id}): its name, its kind's params, its schedule (once at a local time,
// or a cron expression in UTC with a live preview) and its webhook. The kind and the agent stay: a
// different job is a new task. Everything is sent, so what the form shows is what the task becomes;
// on an error the form stays as typed for the user to correct.
import { useState } from 'react';
import type { ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import { useSubmit } from '../ui/use-submit';
import { ErrorBanner } from '../ui/widgets';
import { scheduleBody, ScheduleFields, type ScheduleDraft } from './schedule-fields';
import { draftFrom, KindParams, paramsFor } from './kind-params';
import { localInputValue } from './task-form';
import type { Task } from './task-types';

export function TaskEdit({ task, onSaved, onClose }: { task: Task; onSaved: () => void; onClose: () => void }) {
  const [name, setName] = useState(task.name);
  const [draft, setDraft] = useState(() => draftFrom(task.params));
  const [when, setWhen] = useState<ScheduleDraft>(() => ({ schedule: task.cron ? 'recurring' : 'once', runAt: localInputValue(task.run_at ? new Date(task.run_at) : new Date()), cron: task.cron ?? '' }));
  const [webhookUrl, setWebhookUrl] = useState(task.webhook_url ?? '');

  const { busy, error, submit } = useSubmit(async () => {
    const body = { name: name.trim(), params: paramsFor(task.kind, draft), webhook_url: webhookUrl.trim() || null, ...scheduleBody(when) } satisfies ApiRequest<'/tasks/{id}', 'patch'>;
    await api<Task>(`/tasks/${task.id}`, { method: 'PATCH', body });
    onSaved();
    onClose();
  });

  return (
    <form className="card task-edit" onSubmit={(e) => void submit(e)} aria-label="Edit task">
      <h2>Edit task</h2>
      <div className="row">
        <label className="wide">
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={200} required />
        </label>
      </div>
      <KindParams kind={task.kind} draft={draft} onChange={setDraft} />
      <ScheduleFields
        draft={when}
        onChange={setWhen}
        creating={false}
      />
      <div className="row">
        <label className="wide">
          Webhook URL (empty: none)
          <input type="url" value={webhookUrl} onChange={(e) => setWebhookUrl(e.target.value)} maxLength={2000} placeholder="https://example.com/hooks/rmm" />
        </label>
      </div>
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : 'Save changes'}
        </button>
        <button type="button" onClick={onClose} disabled={busy}>
          Discard
        </button>
      </div>
      <ErrorBanner error={error} />
    </form>
  );
}
