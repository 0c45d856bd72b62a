// The per-agent results of a bulk action: status in words ("waiting for agent", "not connected"), the
// exit code, the first line of the output or the error, and links to the agent and the history entry
// with the whole output. Results hold agent output: untrusted, rendered as text only.
import { Link } from '../router';
import { str } from '../ui/safe-data';
import { RelativeTime } from '../ui/widgets';
import { firstLine } from '../history/history-row';
import { ResultBadge } from './bulk-describe';
import type { BulkResult } from './bulk-types';
import { TableFrame } from '../ui/table-frame';

/** The line a technician scans for: the error, else the output's first line, else the answer in short. */
function outcomeLine(r: BulkResult): string {
  if (r.error) return r.error;
  const result = r.result;
  if (!result) return '';
  if (typeof result.stdout === 'string' || typeof result.stderr === 'string') return firstLine(str(result.stdout)) || firstLine(str(result.stderr));
  return answerSummary(result);
}

/** Another action's answer in words, never raw JSON: an update check counts its updates, the rest its plain fields. */
function answerSummary(result: Record<string, unknown>): string {
  if (Array.isArray(result.updates)) {
    const updates = result.updates as unknown[];
    const security = updates.filter((u) => typeof u === 'object' && u !== null && (u as Record<string, unknown>).security === true).length;
    return `${updates.length} update${updates.length === 1 ? '' : 's'} available${security ? `, ${security} for security` : ''}`;
  }
  const plain = Object.entries(result).filter(([, v]) => v === null || ['string', 'number', 'boolean'].includes(typeof v));
  return firstLine(plain.map(([k, v]) => `${k.replace(/_/g, ' ')}: ${String(v)}`).join(', '));
}

export function BulkResults({ results }: { results: readonly BulkResult[] }) {
  return (
    <TableFrame label="Results per agent">
      <table data-testid="bulk-results" className="bulk-results">
        <thead>
          <tr>
            <th>Agent</th>
            <th>Status</th>
            <th className="num">Exit code</th>
            <th>Output or error</th>
            <th>Finished</th>
            <th>History</th>
          </tr>
        </thead>
        <tbody>
          {results.map((r) => {
            const code = r.result?.exit_code;
            return (
              <tr key={r.agent_id} data-testid="bulk-result-row" data-agent-id={r.agent_id}>
                <td>
                  <Link to={`/agents/${encodeURIComponent(r.agent_id)}`}>{r.agent_name}</Link>
                </td>
                <td>
                  <ResultBadge status={r.status} />
                </td>
                <td className="num mono">{typeof code === 'number' ? code : '–'}</td>
                <td className={`bulk-outcome${r.error ? ' invalid-text' : ''}`} data-testid="bulk-result-output">
                  {outcomeLine(r) || <span className="muted">–</span>}
                </td>
                <td>{r.finished_at ? <RelativeTime iso={r.finished_at} /> : <span className="muted">–</span>}</td>
                <td>{r.history_id !== null ? <Link to={`/scripts/history/${r.history_id}`}>Output</Link> : <span className="muted">–</span>}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableFrame>
  );
}
