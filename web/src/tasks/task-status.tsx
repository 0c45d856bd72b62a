// The status badge of a task or a run. "running" gets the accent colour rather than a warning tone: a
// run in progress is news, not a problem.
import { STATUS_LABELS, type TaskStatus } from './task-types';
import './tasks.css';

const TONES: Record<TaskStatus, string> = {
  scheduled: 'badge-muted',
  running: 'badge-info',
  completed: 'badge-good',
  completed_with_warning: 'badge-warn',
  error: 'badge-bad',
  cancelled: 'badge-muted',
};

export function TaskStatusBadge({ status, testId }: { status: TaskStatus; testId?: string }) {
  return (
    <span className={`badge ${TONES[status] ?? 'badge-muted'}`} data-testid={testId} data-status={status}>
      {STATUS_LABELS[status] ?? status}
    </span>
  );
}
