// A command history list, newest first, a page at a time: fleet-wide (GET /history) on the Scripts page
// or one agent's (GET /agents/{id}/history) on its History tab. The search and the source filter live in
// the URL (a reload or a shared link keeps them); the server searches. Refreshed every 15 s so running
// entries finish on screen.
import { useId } from 'react';
import { setQuery, useQuery } from '../router';
import { ActionsHeader, Empty, ErrorBanner, Loading, LoadMore } from '../ui/widgets';
import { usePagedList } from '../use-paged-list';
import { HistoryRow } from './history-row';
import { HISTORY_SOURCES, SOURCE_LABELS, type HistoryEntry } from './history-types';
import { SearchBox } from './search-box';
import './history.css';
import { TableFrame } from '../ui/table-frame';

const REFRESH_MS = 15_000;
const PAGE = 50;

export function HistoryList({ path, showAgent }: { path: string; showAgent: boolean }) {
  const query = useQuery();
  const q = query.get('q') ?? '';
  const wanted = query.get('source');
  const source = HISTORY_SOURCES.find((s) => s === wanted);
  const history = usePagedList<HistoryEntry>(path, { q: q || undefined, source }, { pageSize: PAGE, refreshMs: REFRESH_MS });
  const ids = useId();
  const list = history.items ?? [];
  const filtered = Boolean(q || source);

  return (
    <div className="history">
      <div className="row" role="search">
        <SearchBox value={q} label="Search" placeholder={showAgent ? 'Command, script, who, agent or output' : 'Command, script, who or output'} />
        {/* Beside, not around, the select: its options would join the label's accessible name. */}
        <div className="field">
          <label htmlFor={`${ids}-source`}>Source</label>
          <select id={`${ids}-source`} value={source ?? ''} onChange={(e) => setQuery({ source: e.target.value || undefined })}>
            <option value="">All sources</option>
            {HISTORY_SOURCES.map((s) => (
              <option key={s} value={s}>
                {SOURCE_LABELS[s]}
              </option>
            ))}
          </select>
        </div>
        <span className="muted">Refreshed every 15 s</span>
      </div>
      <ErrorBanner error={history.error} />
      {!history.items ? (
        !history.error && <Loading />
      ) : list.length === 0 ? (
        <Empty>{filtered ? 'Nothing in the history matches.' : 'Nothing run yet: commands and scripts run here are listed with their output.'}</Empty>
      ) : (
        <TableFrame label="Command history">
          <table data-testid="history-table" className="history-table stack">
            <thead>
              <tr>
                <th>When</th>
                {showAgent && <th>Agent</th>}
                <th>What</th>
                <th className="col-wide">Who</th>
                <th>Status</th>
                <th className="num col-wide">Duration</th>
                <ActionsHeader label="Output" />
              </tr>
            </thead>
            <tbody>
              {list.map((entry) => (
                <HistoryRow key={entry.id} entry={entry} showAgent={showAgent} />
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
      <LoadMore list={history} />
    </div>
  );
}
