// One task: its facts, "Run now", "Edit" (task-edit.tsx) and "Cancel task", and its runs. Refreshed every 5 s while something is
// under way (a run, a run about to be claimed, a webhook being delivered), else every 30 s, so a
// recurring task's next run shows up without a reload.
import { useEffect, useState, type ReactNode } from 'react';
import { Allowed } from '../auth/access';
import { api } from '../api/client';
import type { AgentDetail, Customer } from '../api/types';
import { Link } from '../router';
import { formatDateTime } from '../ui/format';
import { useActionError } from '../ui/use-action-error';
import { ConfirmButton, ErrorBanner, Loading, RelativeTime } from '../ui/widgets';
import { useResource } from '../use-resource';
import { TaskEdit } from './task-edit';
import { TaskRuns } from './task-runs';
import { TaskStatusBadge } from './task-status';
import { describeParams, KIND_LABELS, type Task, type TaskRun } from './task-types';
import { TargetText } from './task-target';
import './tasks.css';

const FAST_MS = 5_000;
const SLOW_MS = 30_000;

interface TaskView {
  task: Task;
  runs: TaskRun[];
}

/** Whether the page should look again soon: the state is about to change on the server. */
function underWay({ task, runs }: TaskView): boolean {
  const latest = runs[0];
  if (task.status === 'running' || latest?.status === 'running') return true;
  // "Run now" makes the task due at once; the scheduler claims it within moments.
  if (task.status === 'scheduled' && task.next_run_at && Date.parse(task.next_run_at) <= Date.now() + FAST_MS) return true;
  // The webhook is sent after the run is closed, with retries; its outcome arrives a little later.
  return task.webhook_url !== null && latest !== undefined && latest.finished_at !== null && latest.webhook === null;
}

export function TaskPage({ id }: { id: string }) {
  // The route gives any text; the API only knows positive integers.
  const taskId = /^[1-9]\d{0,9}$/.test(id) ? Number(id) : undefined;
  const [fast, setFast] = useState(true);
  const view = useResource(
    async (signal): Promise<TaskView> => {
      if (taskId === undefined) throw new Error(`There is no task "${id}".`);
      const [task, runs] = await Promise.all([api<Task>(`/tasks/${taskId}`, { signal }), api<TaskRun[]>(`/tasks/${taskId}/runs`, { signal })]);
      return { task, runs };
    },
    [taskId, id],
    { refreshMs: fast ? FAST_MS : SLOW_MS },
  );
  useEffect(() => {
    if (view.data) setFast(underWay(view.data));
  }, [view.data]);

  if (!view.data) {
    return (
      <section>
        <p className="crumbs">
          <Link to="/tasks">Tasks</Link>
        </p>
        {view.error ? <ErrorBanner error={view.error} /> : <Loading />}
      </section>
    );
  }
  const { task, runs } = view.data;
  return (
    <section className="task-page">
      <p className="crumbs">
        <Link to="/tasks">Tasks</Link> / {task.name}
      </p>
      <div className="task-head">
        <h1>{task.name}</h1>
        <TaskStatusBadge status={task.status} testId="task-status" />
      </div>
      <ErrorBanner error={view.error} />
      <Allowed need="write">
        <TaskActions task={task} onDone={view.reload} />
      </Allowed>
      <TaskFacts task={task} />
      <h2>Runs {fast && <span className="muted">(refreshed every 5 s)</span>}</h2>
      <TaskRuns task={task} runs={runs} />
    </section>
  );
}

function TaskActions({ task, onDone }: { task: Task; onDone: () => void }) {
  const { error, guard } = useActionError();
  const [starting, setStarting] = useState(false);
  const [editing, setEditing] = useState(false);
  const runNow = () =>
    guard(async () => {
      setStarting(true);
      try {
        await api<Task>(`/tasks/${task.id}/run`, { method: 'POST', body: {} });
      } finally {
        setStarting(false);
        onDone();
      }
    });
  const cancel = () =>
    guard(async () => {
      try {
        await api<Task>(`/tasks/${task.id}`, { method: 'DELETE' });
      } finally {
        onDone();
      }
    });
  // The server refuses "Run now" while a run is under way or once cancelled (409): the button says so up
  // front. Cancelling only means something while a run is still to come; a finished one-off task would
  // just lose its outcome. While running, the button stays so the server can say when to try again.
  const running = task.status === 'running';
  const cancelled = task.status === 'cancelled';
  const cancellable = running || task.status === 'scheduled';
  return (
    <>
      <div className="task-actions">
        <button
          type="button"
          className="primary"
          disabled={starting || running || cancelled}
          title={cancelled ? 'A cancelled task cannot run again' : running ? 'The task is running' : undefined}
          onClick={() => void runNow()}
        >
          {starting ? 'Starting…' : 'Run now'}
        </button>
        {/* The server refuses edits while a run is under way or once cancelled (409), as for "Run now". */}
        {!cancelled && (
          <button type="button" disabled={running || editing} title={running ? 'The task is running' : undefined} onClick={() => setEditing(true)}>
            Edit
          </button>
        )}
        {cancellable && (
          <ConfirmButton
            label="Cancel task"
            question={task.cron ? 'Cancel this task? It will not run again.' : 'Cancel this task? It will not run.'}
            busyLabel="Cancelling…"
            onConfirm={cancel}
          />
        )}
        {running && <span className="muted">A running task can be cancelled once this run has finished.</span>}
        {cancelled && <span className="muted">Cancelled: this task will not run again.</span>}
      </div>
      <ErrorBanner error={error} />
      {editing && <TaskEdit task={task} onSaved={onDone} onClose={() => setEditing(false)} />}
    </>
  );
}

function TaskFacts({ task }: { task: Task }) {
  // The agent's name is a nicety: the id stays on screen when the agent is gone or out of reach.
  const agentId = task.agent_id;
  const agent = useResource((signal) => (agentId === null ? Promise.resolve(undefined) : api<AgentDetail>(`/agents/${encodeURIComponent(agentId)}`, { signal })), [agentId]);
  // The task carries its customer's number; the name (and a link) come from the customers list.
  const customers = useResource((signal) => api<Customer[]>('/customers', { signal }), []);
  const customer = customers.data?.find((c) => c.number === task.customer_number);
  const facts: [string, ReactNode][] = [
    ['Kind', KIND_LABELS[task.kind] ?? task.kind],
    ['Parameters', <span className="mono">{describeParams(task)}</span>],
    [
      'Agent',
      agentId === null ? <TargetText target={task.target ?? {}} customers={customers.data} /> : <Link to={`/agents/${encodeURIComponent(agentId)}`}>{agent.data?.name ?? agentId}</Link>,
    ],
    ['Customer', customer ? <Link to={`/customers/${customer.id}`}>{`${customer.number} ${customer.name}`}</Link> : (task.customer_number ?? '–')],
    [
      'Schedule',
      task.cron ? (
        <>
          <code>{task.cron}</code> (cron, UTC)
        </>
      ) : (
        `once at ${formatDateTime(task.run_at)}`
      ),
    ],
    ['Next run', task.next_run_at ? <>{formatDateTime(task.next_run_at)} (<RelativeTime iso={task.next_run_at} />)</> : <span className="muted">none</span>],
    ['Last run', <RelativeTime iso={task.last_run_at} />],
    ['Webhook URL', task.webhook_url ? <span className="mono">{task.webhook_url}</span> : <span className="muted">none</span>],
    ['Created', formatDateTime(task.created_at)],
  ];
  return (
    <div className="card">
      <dl className="facts" data-testid="task-facts">
        {facts.map(([term, value]) => (
          <div className="fact" key={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </div>
  );
}
