// When a task runs: once (a local time, sent as UTC) or recurring (a cron expression in UTC, previewed).
// The new-task form and the edit form share it.
import { useId } from 'react';
import { CronPreview, cronProblem } from './cron-preview';

export type ScheduleKind = 'once' | 'recurring';

export interface ScheduleDraft {
  schedule: ScheduleKind;
  runAt: string;
  cron: string;
}

/** A datetime-local value is local time without an offset; Date reads it as such, toISOString gives UTC. */
export function toUtcIso(local: string): string {
  const date = new Date(local);
  if (Number.isNaN(date.getTime())) throw new Error('Run at: enter a date and a time.');
  return date.toISOString();
}

/** The schedule's fields of a request body: cron, or run_at (none for an empty time: run at once). */
export function scheduleBody(when: ScheduleDraft): { cron: string } | { run_at: string } | Record<string, never> {
  if (when.schedule === 'recurring') {
    // The preview already says why; repeating it here keeps the user from waiting on a sure 400.
    const problem = cronProblem(when.cron.trim());
    if (problem) throw new Error(`Cron expression: ${problem}`);
    return { cron: when.cron.trim() };
  }
  return when.runAt ? { run_at: toUtcIso(when.runAt) } : {};
}

export function ScheduleFields({ draft, onChange, creating }: { draft: ScheduleDraft; onChange: (draft: ScheduleDraft) => void; creating: boolean }) {
  const ids = useId();
  const set = (change: Partial<ScheduleDraft>) => onChange({ ...draft, ...change });
  return (
    <>
      <div className="row">
        <div className="field">
          <label htmlFor={`${ids}-schedule`}>Schedule</label>
          <select id={`${ids}-schedule`} value={draft.schedule} onChange={(e) => set({ schedule: e.target.value as ScheduleKind })}>
            <option value="once">Once</option>
            <option value="recurring">Recurring</option>
          </select>
        </div>
        {draft.schedule === 'once' ? (
          <>
            <label>
              Run at
              {/* A new task may leave it empty (it runs at once); an edited one keeps a time. */}
              <input type="datetime-local" value={draft.runAt} onChange={(e) => set({ runAt: e.target.value })} required={!creating} />
            </label>
            {creating && <span className="muted">Your local time. A time in the past (or none) runs at once.</span>}
          </>
        ) : (
          <label className="wide">
            Cron expression
            <input className="mono" value={draft.cron} onChange={(e) => set({ cron: e.target.value })} required maxLength={200} placeholder="*/15 * * * *" spellCheck={false} />
          </label>
        )}
      </div>
      {draft.schedule === 'recurring' && <CronPreview expression={draft.cron} />}
    </>
  );
}
