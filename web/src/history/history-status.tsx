// A history entry's status as a badge: completed is good news, failed (a non-zero exit) a warning, error
// and lost (no answer at all) bad, running the accent colour.
import type { HistoryStatus } from './history-types';
import './history.css';

const TONES: Record<HistoryStatus, string> = {
  running: 'badge-running',
  completed: 'badge-good',
  failed: 'badge-warn',
  error: 'badge-bad',
  lost: 'badge-bad',
};

const TITLES: Record<HistoryStatus, string> = {
  running: 'Sent; the agent has not answered yet',
  completed: 'Exit code 0',
  failed: 'Another exit code',
  error: 'No answer: not connected, timed out or refused',
  lost: 'No answer recorded by its deadline (the server stopped meanwhile)',
};

export function HistoryStatusBadge({ status }: { status: HistoryStatus }) {
  return (
    <span className={`badge ${TONES[status] ?? 'badge-muted'}`} title={TITLES[status]} data-testid="history-status" data-status={status}>
      {status}
    </span>
  );
}
