// A task's runs, newest first: when, how it ended, what the agent answered and what became of the
// webhook. Results come from the agent and are untrusted: ResultView renders them as React text only
// (exit code, duration and output for a command; packages as a table; other fields as key: value). A
// group task's run shows its bulk action's results per agent.
import { formatDateTime } from '../ui/format';
import { ResultView } from '../ui/result-view';
import { Badge, Empty, RelativeTime } from '../ui/widgets';
import { GroupRunResult } from './group-run-result';
import { TaskStatusBadge } from './task-status';
import type { Task, TaskRun } from './task-types';
import './tasks.css';
import { TableFrame } from '../ui/table-frame';

export function TaskRuns({ task, runs }: { task: Task; runs: readonly TaskRun[] }) {
  if (runs.length === 0) return <Empty>No runs yet.</Empty>;
  return (
    <TableFrame label="Runs">
      <table data-testid="task-runs-table" className="stack">
        <thead>
          <tr>
            <th>Started</th>
            <th>Finished</th>
            <th>Status</th>
            <th>Result</th>
            <th>Webhook</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run, index) => (
            <tr key={run.id} data-testid="task-run-row">
              <td data-label="Started">
                <RelativeTime iso={run.started_at} />
                <div className="muted">{formatDateTime(run.started_at)}</div>
              </td>
              <td data-label="Finished">{run.finished_at ? <RelativeTime iso={run.finished_at} /> : <span className="muted">not yet</span>}</td>
              <td data-label="Status">
                <TaskStatusBadge status={run.status} />
              </td>
              <td data-label="Result" className="task-run-result">
                {/* The newest result open, older ones one click away, so the table stays scannable. */}
                <RunResult run={run} open={index === 0} />
              </td>
              <td data-label="Webhook">
                <WebhookOutcome expected={task.webhook_url !== null} run={run} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableFrame>
  );
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function RunResult({ run, open }: { run: TaskRun; open: boolean }) {
  const { result } = run;
  const error = run.error && <div className="banner banner-error">{run.error}</div>;
  const bulkId = isRecord(result) && typeof result.bulk_action_id === 'number' ? result.bulk_action_id : undefined;
  if (bulkId !== undefined) {
    return (
      <>
        {error}
        <GroupRunResult bulkId={bulkId} open={open} finished={run.finished_at !== null} />
      </>
    );
  }
  if (!result) return error || <span className="muted">{run.finished_at ? 'none' : 'waiting for the agent…'}</span>;
  return (
    <>
      {error}
      <details open={open}>
        <summary>Result</summary>
        <ResultView result={result} />
      </details>
    </>
  );
}

/**
 * The delivery outcome; a finished run whose webhook is still null is being delivered (up to 3 tries).
 * The server stores whatever its sender returned (one that failed outright leaves only {delivered,
 * error}), and the API describes it as any object: each field is read for what it is.
 */
function WebhookOutcome({ expected, run }: { expected: boolean; run: TaskRun }) {
  const w = isRecord(run.webhook) ? run.webhook : null;
  if (!w) {
    if (!expected) return <span className="muted">none</span>;
    return <span className="muted">{run.finished_at ? 'sending…' : 'after the run'}</span>;
  }
  const attempts = typeof w.attempts === 'number' ? w.attempts : undefined;
  return (
    <div>
      <Badge tone={w.delivered ? 'good' : 'bad'}>{w.delivered ? 'delivered' : 'not delivered'}</Badge>
      {typeof w.status_code === 'number' && <span className="mono"> HTTP {w.status_code}</span>}
      {attempts !== undefined && (
        <div className="muted">
          {attempts} {attempts === 1 ? 'attempt' : 'attempts'}
          {typeof w.last_attempt_at === 'string' && (
            <>
              , last <RelativeTime iso={w.last_attempt_at} />
            </>
          )}
        </div>
      )}
      {typeof w.error === 'string' && w.error && <div className="invalid-text">{w.error}</div>}
    </div>
  );
}
