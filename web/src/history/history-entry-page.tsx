// One history entry at its own address (/scripts/history/{id}): what ran where, by whom, how it ended
// and the whole stored output. The run panels and the bulk page link here. Refreshed every 5 s while
// the command still runs.
import { useEffect, useState, type ReactNode } from 'react';
import { api } from '../api/client';
import { Link } from '../router';
import { formatDateTime } from '../ui/format';
import { usePageTitle } from '../ui/page-title';
import { ErrorBanner, Loading, RelativeTime } from '../ui/widgets';
import { useResource } from '../use-resource';
import { OutputView } from './history-output';
import { HistoryStatusBadge } from './history-status';
import { formatMs, SOURCE_LABELS, type HistoryDetail } from './history-types';
import './history.css';

const RUNNING_REFRESH_MS = 5_000;

export function HistoryEntryPage({ id }: { id: string }) {
  // The route gives any text; the API only knows positive integers.
  const entryId = /^[1-9]\d{0,14}$/.test(id) ? Number(id) : undefined;
  const [running, setRunning] = useState(false);
  const entry = useResource(
    (signal) => (entryId === undefined ? Promise.reject(new Error(`There is no history entry "${id}".`)) : api<HistoryDetail>(`/history/${entryId}`, { signal })),
    [entryId, id],
    { refreshMs: running ? RUNNING_REFRESH_MS : undefined },
  );
  const e = entry.data;
  useEffect(() => setRunning(e?.status === 'running'), [e?.status]);
  usePageTitle(e ? `${e.script_name ?? 'Command'} on ${e.agent_name}` : 'History entry', 'Scripts');
  return (
    <section className="history-entry">
      <p className="crumbs">
        <Link to="/scripts/history">Command history</Link>
        {e && <> / {e.id}</>}
      </p>
      {!e ? (
        entry.error ? <ErrorBanner error={entry.error} /> : <Loading />
      ) : (
        <>
          <div className="history-head">
            <h1>{e.script_name ?? 'Command'}</h1>
            <HistoryStatusBadge status={e.status} />
          </div>
          <ErrorBanner error={entry.error} />
          <div className="card">
            <dl className="facts" data-testid="history-facts">
              <Fact term="Agent">
                <Link to={`/agents/${encodeURIComponent(e.agent_id)}/history`}>{e.agent_name}</Link>
              </Fact>
              <Fact term="Source">{SOURCE_LABELS[e.source] ?? e.source}</Fact>
              <Fact term="Who">{e.actor}</Fact>
              <Fact term="Started">
                {formatDateTime(e.started_at)} (<RelativeTime iso={e.started_at} />)
              </Fact>
              <Fact term="Duration">{e.finished_at ? formatMs(e.duration_ms) : <span className="muted">still running</span>}</Fact>
              <Fact term="Exit code">
                <span className="mono" data-testid="history-exit-code">
                  {e.exit_code ?? '–'}
                </span>
              </Fact>
            </dl>
          </div>
          <OutputView entry={e} />
        </>
      )}
    </section>
  );
}

function Fact({ term, children }: { term: string; children: ReactNode }) {
  return (
    <div className="fact">
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}
