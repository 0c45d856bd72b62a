// Acknowledge and Resolve on one alert, each asking for an optional comment inline (no browser dialog):
// the first click opens the comment box, the second sends it. Only the steps the alert's state allows
// are offered (a resolved alert has none); afterwards the list and the navigation badge load again.
import { useId, useState } from 'react';
import type { ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import { useSubmit } from '../ui/use-submit';
import { ErrorBanner } from '../ui/widgets';
import { refreshAlertSummary } from './alert-summary';
import type { Alert } from './alert-types';
import { useAccess } from '../auth/access';

type Step = 'acknowledge' | 'resolve';

const WORDS: Record<Step, { button: string; busy: string; placeholder: string }> = {
  acknowledge: { button: 'Acknowledge', busy: 'Acknowledging…', placeholder: 'e.g. Looking into it, ISP outage reported' },
  resolve: { button: 'Resolve', busy: 'Resolving…', placeholder: 'e.g. Replaced the power supply' },
};

export function AlertActions({ alert, onChanged }: { alert: Alert; onChanged: () => void }) {
  const [step, setStep] = useState<Step>();
  const [comment, setComment] = useState('');
  const id = useId();
  const canWrite = useAccess().canWrite;
  const { busy, error, submit } = useSubmit(async () => {
    if (!step) return;
    const text = comment.trim();
    await api<Alert>(`/alerts/${alert.id}/${step}`, { method: 'POST', body: (text ? { comment: text } : {}) satisfies ApiRequest<'/alerts/{id}/acknowledge', 'post'> });
    setStep(undefined);
    setComment('');
    onChanged();
    refreshAlertSummary();
  });
  if (alert.state === 'resolved' || !canWrite) return null;
  const steps: Step[] = alert.state === 'firing' ? ['acknowledge', 'resolve'] : ['resolve'];

  if (!step) {
    return (
      <div className="alert-actions">
        {steps.map((s) => (
          <button key={s} type="button" className={s === 'acknowledge' ? 'primary' : undefined} onClick={() => setStep(s)}>
            {WORDS[s].button}
          </button>
        ))}
      </div>
    );
  }
  return (
    <form className="alert-comment" onSubmit={(e) => void submit(e)} aria-label={`${WORDS[step].button} alert`}>
      <label htmlFor={`${id}-comment`}>Comment (optional)</label>
      <textarea id={`${id}-comment`} rows={2} maxLength={1000} value={comment} onChange={(e) => setComment(e.target.value)} placeholder={WORDS[step].placeholder} autoFocus />
      <div className="alert-actions">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? WORDS[step].busy : WORDS[step].button}
        </button>
        <button type="button" disabled={busy} onClick={() => setStep(undefined)}>
          Cancel
        </button>
      </div>
      <ErrorBanner error={error} />
    </form>
  );
}
