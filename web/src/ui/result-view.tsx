// An agent's answer or a task's result, readable instead of raw JSON (issue 33): a command's exit code,
// duration and output (each in a <pre>); lists of packages as tables; other fields as "key: value"
// lines, nested ones indented. The data comes from the agent and is untrusted: it is only ever text
// here, its shape is checked before a field is read, and nesting is cut off at a few levels.
import type { ReactNode } from 'react';
import { formatBytes, formatDateTime } from './format';
import { bool, num, obj, str, type Obj } from './safe-data';
import { Badge } from './widgets';
import { TableFrame } from './table-frame';

const MAX_DEPTH = 4;
const MAX_ROWS = 500;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const label = (key: string) => (key.charAt(0).toUpperCase() + key.slice(1)).replace(/_/g, ' ').replace(/ ms$/, '').replace(/ s$/, '');
/** Fields shown by a dedicated part (a command's output, a health check), not again as lines. */
const EXEC_FIELDS = new Set(['exit_code', 'signal', 'stdout', 'stderr', 'timed_out', 'stdout_truncated', 'stderr_truncated', 'duration_ms']);

export function ResultView({ result }: { result: unknown }) {
  if (!isObj(result)) return <Value value={result} depth={0} />;
  const isExec = typeof result.stdout === 'string' || 'exit_code' in result;
  const rest = Object.entries(result).filter(([k]) => !(isExec && EXEC_FIELDS.has(k)) && k !== 'health_check');
  return (
    <div className="result-view" data-testid="result-view">
      {isExec && <ExecOutput result={result} />}
      {isObj(result.health_check) && <HealthCheck check={result.health_check} />}
      <Fields entries={rest} depth={0} />
    </div>
  );
}

function ExecOutput({ result }: { result: Obj }) {
  const code = num(result.exit_code);
  const duration = num(result.duration_ms);
  const stderr = str(result.stderr);
  return (
    <>
      <dl className="result-fields">
        <Line name="Exit code">
          <strong className="mono" data-testid="result-exit-code">
            {code ?? 'none'}
          </strong>
          {code === undefined && (result.timed_out === true ? ' (timed out, killed)' : str(result.signal) ? ` (ended by ${str(result.signal)})` : '')}
        </Line>
        {duration !== undefined && <Line name="Duration">{duration < 1000 ? `${duration} ms` : `${(duration / 1000).toFixed(1)} s`}</Line>}
      </dl>
      <div className="muted">Output{result.stdout_truncated === true && ' (cut off at 1 MiB)'}</div>
      <pre data-testid="result-stdout">{str(result.stdout) || ' '}</pre>
      {stderr && (
        <>
          <div className="muted">Errors{result.stderr_truncated === true && ' (cut off at 1 MiB)'}</div>
          <pre data-testid="result-stderr">{stderr}</pre>
        </>
      )}
    </>
  );
}

function HealthCheck({ check }: { check: Obj }) {
  return (
    <p className="result-health">
      Health check: <Badge tone={check.agent_online === true ? 'good' : 'warn'}>{check.agent_online === true ? 'agent back online' : 'agent not back'}</Badge>
      {typeof check.checked_at === 'string' && <span className="muted"> {formatDateTime(check.checked_at)}</span>}
    </p>
  );
}

function Line({ name, children }: { name: string; children: ReactNode }) {
  return (
    <div className="result-line">
      <dt>{name}:</dt> <dd>{children}</dd>
    </div>
  );
}

function Fields({ entries, depth }: { entries: Array<[string, unknown]>; depth: number }) {
  if (entries.length === 0) return null;
  return (
    <dl className="result-fields">
      {entries.map(([key, value]) => (
        <Line key={key} name={label(key)}>
          <Value value={value} depth={depth + 1} field={key} />
        </Line>
      ))}
    </dl>
  );
}

function Value({ value, depth, field = '' }: { value: unknown; depth: number; field?: string }): ReactNode {
  if (value === null || value === undefined) return <span className="muted">none</span>;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number') return /(^|_)(size|bytes)$/.test(field) ? formatBytes(value) : /_ms$/.test(field) ? `${value} ms` : String(value);
  if (typeof value === 'string') {
    if (/^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(value)) return formatDateTime(value);
    return value.includes('\n') || value.length > 200 ? <pre>{value}</pre> : <span className={/hash|sha|id$/.test(field) ? 'mono' : undefined}>{value}</span>;
  }
  if (depth > MAX_DEPTH) return <span className="muted">(more)</span>;
  if (Array.isArray(value)) {
    if (value.length === 0) return <span className="muted">none</span>;
    if (value.every(isObj)) return <ObjectTable rows={value.slice(0, MAX_ROWS)} more={value.length - MAX_ROWS} depth={depth} />;
    return value.map((v) => (isObj(v) || Array.isArray(v) ? JSON.stringify(v) : str(v, 'none'))).join(', ');
  }
  return <Fields entries={Object.entries(obj(value))} depth={depth} />;
}

/** A list of objects as a table, its columns the keys in first-seen order (packages: name, current, new). */
function ObjectTable({ rows, more, depth }: { rows: Obj[]; more: number; depth: number }) {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return (
    <TableFrame label="Result table">
      <table className="result-table">
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c}>{label(c)}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={i}>
              {columns.map((c) => (
                <td key={c} className={c === 'name' ? 'mono' : undefined}>
                  {c === 'security' && bool(row[c]) ? <Badge tone="warn">security</Badge> : <Value value={row[c]} depth={depth + 1} field={c} />}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {more > 0 && <p className="muted">and {more} more</p>}
    </TableFrame>
  );
}
