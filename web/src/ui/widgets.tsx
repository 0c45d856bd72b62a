// Small building blocks every page uses: status badges, relative times, error and empty states.
import { useEffect, useState, type ReactNode } from 'react';
import { ApiError } from '../api/client';
import type { AgentStatus } from '../api/types';
import { formatDateTime, relativeTime } from './format';

export function StatusBadge({ status }: { status: AgentStatus }) {
  return <span className={`badge badge-${status}`}>{status}</span>;
}

export function Badge({ tone, children }: { tone: 'good' | 'warn' | 'bad' | 'muted'; children: ReactNode }) {
  return <span className={`badge badge-${tone}`}>{children}</span>;
}

/** "3 min ago", kept current; the exact time on hover. */
export function RelativeTime({ iso }: { iso: string | null }) {
  const [, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), 15_000);
    return () => clearInterval(timer);
  }, []);
  if (!iso) return <span className="muted">never</span>;
  return (
    <time dateTime={iso} title={formatDateTime(iso)}>
      {relativeTime(iso)}
    </time>
  );
}

/** What went wrong, in the server's words: no error codes or request ids in the text (issue 33). */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The request id stays at hand for a support ticket: in the banner's tooltip, not in its text. */
export function ErrorBanner({ error }: { error: unknown }) {
  if (!error) return null;
  const requestId = error instanceof ApiError ? error.requestId : undefined;
  return (
    <div className="banner banner-error" role="alert" title={requestId ? `Request ${requestId}` : undefined}>
      {errorText(error)}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

export function Loading() {
  return <p className="muted">Loading…</p>;
}

/**
 * A destructive action: the first click asks, the second does it. While it runs the button says so;
 * the caller shows the result.
 */
export function ConfirmButton({ label, question, onConfirm, busyLabel }: { label: string; question: string; busyLabel?: string; onConfirm: () => Promise<void> }) {
  const [stage, setStage] = useState<'idle' | 'asking' | 'busy'>('idle');
  const confirm = async () => {
    setStage('busy');
    try {
      await onConfirm();
    } finally {
      setStage('idle');
    }
  };
  if (stage === 'asking') {
    return (
      <span className="confirm" role="group" aria-label={question}>
        <span>{question}</span>
        <button type="button" className="danger" onClick={() => void confirm()}>
          Yes, {label.toLowerCase()}
        </button>
        <button type="button" onClick={() => setStage('idle')}>
          Cancel
        </button>
      </span>
    );
  }
  return (
    <button type="button" className="danger-outline" disabled={stage === 'busy'} onClick={() => setStage('asking')}>
      {stage === 'busy' ? (busyLabel ?? `${label}…`) : label}
    </button>
  );
}

/** "Load more" under a paged list, while the server says more items follow. */
export function LoadMore({ list }: { list: { hasMore: boolean; loadingMore: boolean; loadMore: () => void } }) {
  if (!list.hasMore) return null;
  return (
    <button type="button" className="show-more" data-testid="load-more" disabled={list.loadingMore} onClick={list.loadMore}>
      {list.loadingMore ? 'Loading…' : 'Load more'}
    </button>
  );
}

/**
 * The header of a table's column of row buttons: named for screen readers (an empty header leaves the
 * column without a name), not shown, as the buttons say what they do.
 */
export function ActionsHeader({ label = 'Actions' }: { label?: string }) {
  return (
    <th>
      <span className="visually-hidden">{label}</span>
    </th>
  );
}
