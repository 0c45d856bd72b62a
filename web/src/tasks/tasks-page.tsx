// All tasks, newest first, a page at a time: what runs where and when, with its status, refreshed every
// 15 s; a status filter the server applies (kept in the URL so a reload keeps it) and the "New task" form.
import { useMemo } from 'react';
import { Allowed } from '../auth/access';
import { api } from '../api/client';
import type { Agent } from '../api/types';
import { Link, setQuery, useQuery } from '../router';
import { formatDateTime } from '../ui/format';
import { Empty, ErrorBanner, Loading, LoadMore, RelativeTime } from '../ui/widgets';
import { usePagedList } from '../use-paged-list';
import { useResource } from '../use-resource';
import { TaskForm } from './task-form';
import { TaskStatusBadge } from './task-status';
import { KIND_LABELS, STATUS_LABELS, TASK_STATUSES, type Task } from './task-types';
import { TargetText } from './task-target';
import './tasks.css';
import { TableFrame } from '../ui/table-frame';

const REFRESH_MS = 15_000;
const PAGE = 100;

export function TasksPage() {
  const wanted = useQuery().get('status');
  const status = TASK_STATUSES.find((s) => s === wanted);
  const tasks = usePagedList<Task>('/tasks', { status }, { pageSize: PAGE, refreshMs: REFRESH_MS });
  // Names for the agent column and the form's choices; agents come and go far more slowly than tasks run.
  const agents = useResource((signal) => api<Agent[]>('/agents', { signal }), []);
  const agentNames = useMemo(() => new Map((agents.data ?? []).map((a) => [a.id, a.name])), [agents.data]);
  const list = tasks.items ?? [];

  return (
    <section className="tasks">
      <h1>
        Tasks{' '}
        {tasks.items && (
          <span className="muted">
            ({list.length}
            {tasks.hasMore ? '+' : ''})
          </span>
        )}
      </h1>
      <div className="row" role="search">
        {/* Beside, not around, the select: its options ("scheduled") would join the label's name. */}
        <div className="field">
          <label htmlFor="task-status-filter">Status</label>
          <select id="task-status-filter" value={status ?? ''} onChange={(e) => setQuery({ status: e.target.value || undefined })}>
            <option value="">All statuses</option>
            {TASK_STATUSES.map((s) => (
              <option key={s} value={s}>
                {STATUS_LABELS[s]}
              </option>
            ))}
          </select>
        </div>
        <span className="muted">Refreshed every 15 s</span>
      </div>
      <ErrorBanner error={tasks.error} />
      {!tasks.items ? (
        !tasks.error && <Loading />
      ) : list.length === 0 ? (
        <Empty>{status ? `No ${STATUS_LABELS[status]} tasks.` : 'No tasks yet.'}</Empty>
      ) : (
        <TableFrame label="Tasks">
          <table data-testid="tasks-table">
            <thead>
              <tr>
                <th>Task</th>
                <th>Agent</th>
                <th>Kind</th>
                <th>Schedule</th>
                <th>Status</th>
                <th>Last run</th>
              </tr>
            </thead>
            <tbody>
              {list.map((t) => (
                <tr key={t.id} data-testid="task-row">
                  <td>
                    <Link to={`/tasks/${t.id}`}>{t.name || KIND_LABELS[t.kind]}</Link>
                  </td>
                  <td>
                    {t.agent_id === null ? (
                      <TargetText target={t.target ?? {}} customers={undefined} />
                    ) : (
                      <Link to={`/agents/${encodeURIComponent(t.agent_id)}`}>{agentNames.get(t.agent_id) ?? <span className="mono">{t.agent_id.slice(0, 12)}…</span>}</Link>
                    )}
                    {t.customer_number && <div className="muted">customer {t.customer_number}</div>}
                  </td>
                  <td>{KIND_LABELS[t.kind] ?? t.kind}</td>
                  <td>
                    <Schedule task={t} />
                  </td>
                  <td>
                    <TaskStatusBadge status={t.status} />
                  </td>
                  <td>
                    <RelativeTime iso={t.last_run_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
      <LoadMore list={tasks} />
      <ErrorBanner error={agents.error} />
      <Allowed need="write">
        <TaskForm agents={agents.data} />
      </Allowed>
    </section>
  );
}

/** "once at …", or the cron expression with the server's next run (none once cancelled). */
function Schedule({ task }: { task: Task }) {
  if (!task.cron) return <span title={task.run_at ?? undefined}>once at {formatDateTime(task.run_at)}</span>;
  return (
    <>
      <code>{task.cron}</code> <span className="muted">UTC</span>
      {task.next_run_at && (
        <div className="muted">
          next <time dateTime={task.next_run_at}>{formatDateTime(task.next_run_at)}</time>
        </div>
      )}
    </>
  );
}
