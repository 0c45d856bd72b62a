// Acknowledge every firing alert shown at once, with one optional comment (31 open alerts were 31
// clicks). POST /alerts/acknowledge with their ids; alerts that changed meanwhile (resolved, or
// acknowledged by someone else) are skipped by the server and said so here.
import { useId, useState } from 'react';
import type { ApiBody, ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import { useAccess } from '../auth/access';
import { useSubmit } from '../ui/use-submit';
import { ErrorBanner } from '../ui/widgets';

export function AcknowledgeAll({ ids, onChanged }: { ids: readonly number[]; onChanged: () => void }) {
  const [asking, setAsking] = useState(false);
  const [comment, setComment] = useState('');
  const [outcome, setOutcome] = useState<string>();
  const inputId = useId();
  const { busy, error, submit } = useSubmit(async () => {
    const text = comment.trim();
    const answer = await api<ApiBody<'/alerts/acknowledge', 'post'>>('/alerts/acknowledge', { method: 'POST', body: { ids: [...ids], ...(text ? { comment: text } : {}) } satisfies ApiRequest<'/alerts/acknowledge', 'post'> });
    setOutcome(`Acknowledged ${answer.acknowledged.length}${answer.skipped.length ? `; ${answer.skipped.length} had changed meanwhile` : ''}.`);
    setAsking(false);
    setComment('');
    onChanged();
  });
  if (!useAccess().canWrite || (ids.length === 0 && !outcome)) return null;
  return (
    <div className="alert-actions acknowledge-all">
      {asking ? (
        <form className="row" onSubmit={(e) => void submit(e)} aria-label="Acknowledge all firing alerts">
          <label htmlFor={inputId}>Comment for all {ids.length} (optional)</label>
          <input id={inputId} value={comment} maxLength={1000} onChange={(e) => setComment(e.target.value)} placeholder="e.g. Provider outage, on it" />
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Acknowledging…' : `Acknowledge ${ids.length}`}
          </button>
          <button type="button" onClick={() => setAsking(false)}>
            Cancel
          </button>
        </form>
      ) : (
        ids.length > 0 && (
          <button
            type="button"
            onClick={() => {
              setOutcome(undefined);
              setAsking(true);
            }}
          >
            Acknowledge all {ids.length} firing
          </button>
        )
      )}
      {outcome && (
        <span className="muted" role="status">
          {outcome}
        </span>
      )}
      <ErrorBanner error={error} />
    </div>
  );
}
