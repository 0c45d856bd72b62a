// The agent's events (status changes and connects/disconnects), newest first, filterable by type and
// refreshed every 30 s; "Load more" follows the server's next-page link, back to the first event.
import type { AgentEvent } from '../../api/types';
import { setQuery, useQuery } from '../../router';
import { formatDateTime } from '../../ui/format';
import { usePagedList } from '../../use-paged-list';
import { Badge, Empty, ErrorBanner, Loading, LoadMore, RelativeTime } from '../../ui/widgets';
import type { TabProps } from '../tab-props';

const TYPES: readonly AgentEvent['type'][] = ['online', 'stale', 'offline', 'connected', 'disconnected'];
const TONES: Record<AgentEvent['type'], 'good' | 'warn' | 'bad' | 'muted'> = { online: 'good', connected: 'good', stale: 'warn', offline: 'bad', disconnected: 'muted' };
const PAGE = 100;
const REFRESH_MS = 30_000;

export function EventsTab({ agent }: TabProps) {
  const wanted = useQuery().get('type');
  const type = TYPES.find((t) => t === wanted);
  const events = usePagedList<AgentEvent>(`/agents/${encodeURIComponent(agent.id)}/events`, { type }, { pageSize: PAGE, refreshMs: REFRESH_MS });
  const list = events.items ?? [];
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
      {!events.items ? (
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
      <LoadMore list={events} />
    </div>
  );
}
