// The agent's events (status changes and connects/disconnects), newest first, filterable by type and
// refreshed every 30 s. The API pages by count only, so "Load more" asks for a longer list (up to its
// maximum of 1,000).
import { useState } from 'react';
import { api } from '../../api/client';
import type { AgentEvent } from '../../api/types';
import { setQuery, useQuery } from '../../router';
import { formatDateTime } from '../../ui/format';
import { useResource } from '../../use-resource';
import { Badge, Empty, ErrorBanner, Loading, RelativeTime } from '../../ui/widgets';
import type { TabProps } from '../tab-props';

const TYPES: readonly AgentEvent['type'][] = ['online', 'stale', 'offline', 'connected', 'disconnected'];
const TONES: Record<AgentEvent['type'], 'good' | 'warn' | 'bad' | 'muted'> = { online: 'good', connected: 'good', stale: 'warn', offline: 'bad', disconnected: 'muted' };
const PAGE = 100;
const MAX = 1000;
const REFRESH_MS = 30_000;

export function EventsTab({ agent }: TabProps) {
  const wanted = useQuery().get('type');
  const type = TYPES.find((t) => t === wanted);
  const [limit, setLimit] = useState(PAGE);
  const events = useResource(
    (signal) => api<AgentEvent[]>(`/agents/${encodeURIComponent(agent.id)}/events`, { signal, query: { limit, type } }),
    [agent.id, limit, type],
    { refreshMs: REFRESH_MS },
  );
  const list = events.data ?? [];
  return (
    <div className="events-tab">
      <div className="row">
        <label>
          Type
          <select value={type ?? ''} onChange={(e) => setQuery({ type: e.target.value || undefined })}>
            <option value="">All events</option>
            {TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <span className="muted">Refreshed every 30 s</span>
      </div>
      <ErrorBanner error={events.error} />
      {!events.data ? (
        !events.error && <Loading />
      ) : list.length === 0 ? (
        <Empty>{type ? `No ${type} events.` : 'No events yet.'}</Empty>
      ) : (
        <table data-testid="events-table">
          <thead>
            <tr>
              <th>Event</th>
              <th>When</th>
              <th>Time</th>
            </tr>
          </thead>
          <tbody>
            {list.map((e) => (
              <tr key={e.id}>
                <td>
                  <Badge tone={TONES[e.type]}>{e.type}</Badge>
                </td>
                <td>
                  <RelativeTime iso={e.created_at} />
                </td>
                <td>{formatDateTime(e.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.length === limit && limit < MAX && (
        <button type="button" className="show-more" disabled={events.loading} onClick={() => setLimit(Math.min(MAX, limit + PAGE))}>
          {events.loading ? 'Loading…' : 'Load more'}
        </button>
      )}
    </div>
  );
}
