// One history entry as a table row: when, (agent), what ran, who, how it ended, how long; "Output"
// opens a second row with the whole stored output, loaded only then.
import { useState } from 'react';
import { Link } from '../router';
import { RelativeTime } from '../ui/widgets';
import { HistoryOutput } from './history-output';
import { HistoryStatusBadge } from './history-status';
import { formatMs, SOURCE_LABELS, type HistoryEntry } from './history-types';

/** The first line of a text, cut for a table cell (the whole text is one click away). */
export function firstLine(text: string, max = 120): string {
  const line = text.split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

export function HistoryRow({ entry, showAgent }: { entry: HistoryEntry; showAgent: boolean }) {
  const [open, setOpen] = useState(false);
  const columns = showAgent ? 7 : 6;
  const preview = entry.error ?? firstLine(entry.output_preview);
  return (
    <>
      <tr data-testid="history-row" data-history-id={entry.id}>
        <td data-label="When">
          <Link to={`/scripts/history/${entry.id}`}>
            <RelativeTime iso={entry.started_at} />
          </Link>
        </td>
        {showAgent && (
          <td data-label="Agent">
            <Link to={`/agents/${encodeURIComponent(entry.agent_id)}/history`}>{entry.agent_name}</Link>
          </td>
        )}
        <td className="history-what" data-label="What">
          {entry.script_name ? (
            <span>
              {entry.script_id !== null ? <Link to={`/scripts?edit=${entry.script_id}`}>{entry.script_name}</Link> : entry.script_name}
            </span>
          ) : (
            <code>{firstLine(entry.command, 80)}</code>
          )}{' '}
          <span className="muted">{SOURCE_LABELS[entry.source] ?? entry.source}</span>
          {preview && <div className="muted history-preview">{preview}</div>}
        </td>
        <td className="col-wide" data-label="Who">
          {entry.actor}
          {entry.actor_type !== 'user' && <div className="muted">{entry.actor_type === 'api_key' ? 'API key' : 'system'}</div>}
        </td>
        <td data-label="Status">
          <HistoryStatusBadge status={entry.status} />
          {entry.exit_code !== null && <div className="muted mono">exit {entry.exit_code}</div>}
        </td>
        <td className="num col-wide" data-label="Duration">{formatMs(entry.duration_ms)}</td>
        <td>
          <button type="button" className="link" aria-expanded={open} onClick={() => setOpen(!open)}>
            {open ? 'Hide output' : 'Output'}
          </button>
        </td>
      </tr>
      {open && (
        <tr className="history-detail">
          <td colSpan={columns}>
            <HistoryOutput id={entry.id} status={entry.status} />
          </td>
        </tr>
      )}
    </>
  );
}
