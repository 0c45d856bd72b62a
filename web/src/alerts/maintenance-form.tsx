// Creating or editing a maintenance window: where (all agents, one customer, one agent) and when — once,
// from a start to an end typed in UTC (the local time shown beside), or recurring on a five-field UTC cron
// expression for a number of minutes, with the next starts previewed by the same check the server uses.
import { useEffect, useId, useRef, useState } from 'react';
import type { ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import { CronPreview, cronProblem } from '../tasks/cron-preview';
import { formatDateTime } from '../ui/format';
import { useSubmit } from '../ui/use-submit';
import type { MaintenanceWindow } from './alert-types';
import { FieldError, fieldErrors, invalidProps } from './field-errors';
import { ALL_AGENTS, scopeDraftOf, scopeOf, ScopePicker, type ScopeDraft } from './scope-picker';
import { utcInputToIso, utcInputValue } from './time-input';
import type { Directory } from './use-directory';
import { FormFooter } from '../ui/form-footer';

interface Props {
  window: MaintenanceWindow | null;
  directory: Directory;
  onSaved: () => void;
  onCancel: () => void;
}

/** This hour and the next, in UTC, for a new one-off window. */
function nextHour(offsetHours: number): string {
  const date = new Date();
  date.setUTCMinutes(0, 0, 0);
  date.setUTCHours(date.getUTCHours() + offsetHours);
  return utcInputValue(date.toISOString());
}

export function MaintenanceForm({ window: w, directory, onSaved, onCancel }: Props) {
  const [name, setName] = useState(w?.name ?? '');
  const [scope, setScope] = useState<ScopeDraft>(() => (w ? scopeDraftOf(w) : ALL_AGENTS));
  const [recurring, setRecurring] = useState(Boolean(w?.cron));
  const [startsAt, setStartsAt] = useState(() => (w?.starts_at ? utcInputValue(w.starts_at) : nextHour(1)));
  const [endsAt, setEndsAt] = useState(() => (w?.ends_at ? utcInputValue(w.ends_at) : nextHour(2)));
  const [cron, setCron] = useState(w?.cron ?? '');
  const [duration, setDuration] = useState(w?.duration_minutes ? String(w.duration_minutes) : '60');
  const id = useId();
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    void form.current?.scrollIntoView({ block: 'nearest' });
  }, []);

  const { busy, error, submit } = useSubmit(async () => {
    const base = { name: name.trim(), ...scopeOf(scope) };
    let body: ApiRequest<'/maintenance-windows', 'post'>;
    if (recurring) {
      const problem = cronProblem(cron.trim());
      if (problem) throw new Error(`Cron expression: ${problem}`);
      body = { ...base, cron: cron.trim(), duration_minutes: Number(duration) };
    } else {
      const start = utcInputToIso(startsAt);
      const end = utcInputToIso(endsAt);
      if (!start || !end) throw new Error('Enter a start and an end (UTC).');
      body = { ...base, starts_at: start, ends_at: end };
    }
    if (w) await api<MaintenanceWindow>(`/maintenance-windows/${w.id}`, { method: 'PUT', body: body satisfies ApiRequest<'/maintenance-windows/{id}', 'put'> });
    else await api<MaintenanceWindow>('/maintenance-windows', { method: 'POST', body });
    onSaved();
  });
  const errors = fieldErrors(error);
  const local = (value: string) => {
    const iso = utcInputToIso(value);
    return iso ? <small className="muted">your time: {formatDateTime(iso)}</small> : null;
  };

  return (
    <form ref={form} className="card alerting-form" onSubmit={(e) => void submit(e)} aria-label={w ? `Edit maintenance window ${w.name}` : 'New maintenance window'}>
      <h2>{w ? `Edit window “${w.name}”` : 'New maintenance window'}</h2>
      <div className="row">
        <div className="field grow">
          <label htmlFor={`${id}-name`}>Name</label>
          <input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} placeholder="e.g. Firmware updates Sunday night" {...invalidProps(errors, 'name', `${id}-name`)} />
          <FieldError errors={errors} field="name" id={`${id}-name`} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-when`}>When</label>
          <select id={`${id}-when`} value={recurring ? 'recurring' : 'once'} onChange={(e) => setRecurring(e.target.value === 'recurring')}>
            <option value="once">Once</option>
            <option value="recurring">Recurring (cron)</option>
          </select>
        </div>
      </div>
      <ScopePicker id={id} draft={scope} onChange={setScope} directory={directory} errors={errors} />
      {recurring ? (
        <>
          <div className="row">
            <div className="field grow">
              <label htmlFor={`${id}-cron`}>Cron expression (UTC)</label>
              <input id={`${id}-cron`} className="mono" value={cron} onChange={(e) => setCron(e.target.value)} required maxLength={200} placeholder="0 2 * * 0" spellCheck={false} {...invalidProps(errors, 'cron', `${id}-cron`)} />
              <FieldError errors={errors} field="cron" id={`${id}-cron`} />
            </div>
            <div className="field">
              <label htmlFor={`${id}-duration`}>Duration (minutes)</label>
              <input id={`${id}-duration`} type="number" min={1} max={10_080} step={1} value={duration} onChange={(e) => setDuration(e.target.value)} required {...invalidProps(errors, 'duration_minutes', `${id}-duration`)} />
              <FieldError errors={errors} field="duration_minutes" id={`${id}-duration`} />
            </div>
          </div>
          <CronPreview expression={cron} />
        </>
      ) : (
        <div className="row">
          <div className="field">
            <label htmlFor={`${id}-start`}>Starts (UTC)</label>
            <input id={`${id}-start`} type="datetime-local" value={startsAt} onChange={(e) => setStartsAt(e.target.value)} required {...invalidProps(errors, 'starts_at', `${id}-start`)} />
            {local(startsAt)}
            <FieldError errors={errors} field="starts_at" id={`${id}-start`} />
          </div>
          <div className="field">
            <label htmlFor={`${id}-end`}>Ends (UTC)</label>
            <input id={`${id}-end`} type="datetime-local" value={endsAt} onChange={(e) => setEndsAt(e.target.value)} required {...invalidProps(errors, 'ends_at', `${id}-end`)} />
            {local(endsAt)}
            <FieldError errors={errors} field="ends_at" id={`${id}-end`} />
          </div>
        </div>
      )}
      <p className="muted form-note">Alerts that begin inside the window are recorded as suppressed and notify nobody, their resolution included.</p>
      <FormFooter busy={busy} error={error} submitLabel={w ? 'Save window' : 'Create window'} onCancel={onCancel} />
    </form>
  );
}
