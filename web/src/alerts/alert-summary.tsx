// The number of open alerts beside "Alerts" in the navigation: GET /alerts/summary every 30 s, and at
// once after this console acknowledged or resolved one (refreshAlertSummary), so the badge never lags
// behind what the user just did. Hidden when nothing is open, and when the server has no alerting
// (an older server answers 404): the header must never break over a missing count.
import { useEffect } from 'react';
import { api } from '../api/client';
import { useResource } from '../use-resource';
import type { AlertSummary } from './alert-types';
import './alerts.css';

const REFRESH_MS = 30_000;
const listeners = new Set<() => void>();

/** Asks every mounted badge (and open-alert list) to load again now. */
export function refreshAlertSummary(): void {
  for (const listener of listeners) listener();
}

/** Calls `reload` whenever refreshAlertSummary() is called, while the component is mounted. */
export function useAlertRefresh(reload: () => void): void {
  useEffect(() => {
    listeners.add(reload);
    return () => {
      listeners.delete(reload);
    };
  }, [reload]);
}

export function OpenAlertsBadge() {
  const summary = useResource((signal) => api<AlertSummary>('/alerts/summary', { signal }), [], { refreshMs: REFRESH_MS });
  useAlertRefresh(summary.reload);
  // A failed refresh keeps the last count (useResource keeps its data); a server without alerting has none.
  const open = summary.data?.open ?? 0;
  if (open <= 0) return null;
  const firing = summary.data?.firing ?? 0;
  const text = `${open} open alert${open === 1 ? '' : 's'}`;
  return (
    <span className={`nav-count${firing > 0 ? ' nav-count-firing' : ''}`} data-testid="nav-alert-count" title={`${text}: ${firing} firing, ${summary.data?.acknowledged ?? 0} acknowledged`}>
      <span aria-hidden="true">{open > 99 ? '99+' : open}</span>
      <span className="visually-hidden"> {text}</span>
    </span>
  );
}
