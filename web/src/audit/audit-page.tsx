// The audit log: who did what to which object, newest first, filtered by actor, action and time range
// (kept in the URL); "Load more" follows the server's next-page link, back to the oldest entry.
import { useEffect, useState } from 'react';
import { setQuery, useQuery } from '../router';
import { formatDateTime } from '../ui/format';
import { Badge, Empty, ErrorBanner, Loading, LoadMore } from '../ui/widgets';
import { usePagedList } from '../use-paged-list';
import { AuditDetails, AuditTarget } from './audit-details';
import { localToUtc, utcToLocal } from './audit-time';
import type { ApiItem } from '../api/api-types';
import './audit.css';
import { TableFrame } from '../ui/table-frame';

interface Filters {
  actor?: string;
  action?: string;
  from?: string;
  to?: string;
}

const PAGE = 100;
const TYPING_DELAY_MS = 300;

export function AuditPage() {
  const query = useQuery();
  const filters: Filters = {
    actor: query.get('actor') ?? undefined,
    action: query.get('action') ?? undefined,
    from: query.get('from') ?? undefined,
    to: query.get('to') ?? undefined,
  };
  return (
    <section>
      <h1>Audit log</h1>
      <div className="row" role="search">
        <TextFilter label="Actor" name="actor" value={filters.actor ?? ''} placeholder="Exact username or key hint" />
        <TextFilter label="Action" name="action" value={filters.action ?? ''} placeholder="Exact, e.g. auth.login" />
        <label>
          From
          <input type="datetime-local" value={utcToLocal(filters.from ?? null)} onChange={(e) => setQuery({ from: localToUtc(e.target.value) })} />
        </label>
        <label>
          To
          <input type="datetime-local" value={utcToLocal(filters.to ?? null)} onChange={(e) => setQuery({ to: localToUtc(e.target.value, true) })} />
        </label>
        {(filters.actor || filters.action || filters.from || filters.to) && (
          <button type="button" className="link" onClick={() => setQuery({ actor: undefined, action: undefined, from: undefined, to: undefined })}>
            Clear filters
          </button>
        )}
      </div>
      {/* A new filter starts a new list: the key drops the pages loaded for the old one. */}
      <AuditList key={JSON.stringify(filters)} filters={filters} />
    </section>
  );
}

function AuditList({ filters }: { filters: Filters }) {
  const list = usePagedList<ApiItem<'/audit'>>('/audit', { ...filters }, { pageSize: PAGE });
  const entries = list.items ?? [];

  if (!list.items) return list.error ? <ErrorBanner error={list.error} /> : <Loading />;
  return (
    <>
      <ErrorBanner error={list.error} />
      {entries.length === 0 ? (
        <Empty>No audit entries match.</Empty>
      ) : (
        <TableFrame label="Audit log">
          <table data-testid="audit-table" className="audit-table">
            <thead>
              <tr>
                <th>Time</th>
                <th>Actor</th>
                <th>Action</th>
                <th>Target</th>
                <th>Details</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.id} data-testid="audit-row">
                  <td>
                    <time dateTime={e.time}>{formatDateTime(e.time)}</time>
                  </td>
                  <td>
                    <Badge tone="muted">{e.actor_type === 'user' ? 'user' : 'API key'}</Badge> <span className="mono">{e.actor}</span>
                  </td>
                  <td className="mono">{e.action}</td>
                  <td>
                    <div className="audit-wrap">
                      <AuditTarget entry={e} />
                    </div>
                  </td>
                  <td>
                    <div className="audit-wrap">
                      <AuditDetails entry={e} />
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
      <LoadMore list={list} />
    </>
  );
}

/** Typing updates the URL (and so the list) after a short pause, not on every key. */
function TextFilter({ label, name, value, placeholder }: { label: string; name: string; value: string; placeholder: string }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  useEffect(() => {
    if (text.trim() === value) return;
    const timer = setTimeout(() => setQuery({ [name]: text.trim() || undefined }), TYPING_DELAY_MS);
    return () => clearTimeout(timer);
  }, [text, value, name]);
  return (
    <label>
      {label}
      <input type="search" value={text} onChange={(e) => setText(e.target.value)} maxLength={200} placeholder={placeholder} />
    </label>
  );
}
