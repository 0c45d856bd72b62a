// The fleet at a glance, the technician's start page: how many agents are in each state and on each
// platform, which need attention and why (ranked by severity, attention-list.tsx), and what happened
// last. Refreshes on its own.
import { PLATFORM_LABELS, STATUSES, type Agent, type AgentEvent } from '../api/types';
import { Link } from '../router';
import { RelativeTime, ErrorBanner, Loading, StatusBadge, Empty, Badge } from '../ui/widgets';
import { useResource } from '../use-resource';
import { AttentionList } from './attention-list';
import { countByPlatform, countByStatus, loadAgents, loadAttention, loadRecentEvents } from './fleet-data';
import { TableFrame } from '../ui/table-frame';

const REFRESH_MS = 30_000;

export function FleetPage() {
  const agents = useResource(loadAgents, [], { refreshMs: REFRESH_MS });
  const attention = useResource(loadAttention, [], { refreshMs: REFRESH_MS });
  const events = useResource(loadRecentEvents, [], { refreshMs: REFRESH_MS });
  const busy = agents.loading || attention.loading || events.loading;
  const refresh = () => [agents, attention, events].forEach((r) => r.reload());
  const names = new Map((agents.data?.agents ?? []).map((a) => [a.id, a.name]));
  return (
    <section>
      <div className="row page-title">
        <h1>Fleet</h1>
        <span className="spacer" />
        {agents.data && (
          <span className="muted" aria-live="polite">
            Updated <RelativeTime iso={new Date(agents.data.loadedAt).toISOString()} />
          </span>
        )}
        <button type="button" onClick={refresh} disabled={busy}>
          Refresh
        </button>
      </div>
      <ErrorBanner error={agents.error} />
      {agents.data ? <Counts agents={agents.data.agents} /> : !agents.error && <Loading />}
      <h2>Needs attention {attention.data && `(${attention.data.length})`}</h2>
      <ErrorBanner error={attention.error} />
      {attention.data ? <AttentionList items={attention.data} /> : !attention.error && <Loading />}
      <h2>Recent events</h2>
      <ErrorBanner error={events.error} />
      {events.data ? <RecentEvents events={events.data} names={names} /> : !events.error && <Loading />}
    </section>
  );
}

function Counts({ agents }: { agents: Agent[] }) {
  const counts = countByStatus(agents);
  return (
    <>
      <div className="cards" aria-label="Agents by status">
        {STATUSES.map((status) => (
          <Link key={status} to={`/agents?status=${status}`} className={`card stat stat-${status}`} data-testid={`count-${status}`}>
            <StatusBadge status={status} />
            <strong>{counts[status]}</strong>
            <span className="muted">of {agents.length} agents</span>
          </Link>
        ))}
      </div>
      <h2>By platform</h2>
      <PlatformTable agents={agents} />
    </>
  );
}

function RecentEvents({ events, names }: { events: AgentEvent[]; names: Map<string, string> }) {
  if (events.length === 0) return <Empty>No events yet.</Empty>;
  return (
    <TableFrame label="Recent events">
      <table>
        <thead>
          <tr>
            <th>Agent</th>
            <th>Event</th>
            <th>When</th>
          </tr>
        </thead>
        <tbody>
          {events.map((e) => (
            <tr key={e.id}>
              <td>
                <Link to={`/agents/${e.agent_id}`}>{names.get(e.agent_id) ?? e.agent_id}</Link>
              </td>
              <td>
                <Badge tone={e.type === 'online' || e.type === 'connected' ? 'good' : e.type === 'stale' ? 'warn' : 'bad'}>{e.type}</Badge>
              </td>
              <td>
                <RelativeTime iso={e.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableFrame>
  );
}

function PlatformTable({ agents }: { agents: Agent[] }) {
  const rows = countByPlatform(agents);
  if (rows.length === 0) return <Empty>No agents yet. Pre-register one on the Agents page, or install an agent with a key.</Empty>;
  return (
    <TableFrame label="Agents by platform">
      <table>
        <thead>
          <tr>
            <th>Platform</th>
            <th className="num">Agents</th>
            {STATUSES.map((s) => (
              <th key={s} className="num">
                {s}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.platform ?? 'none'}>
              <td>{row.platform ? <Link to={`/agents?platform=${row.platform}`}>{PLATFORM_LABELS[row.platform]}</Link> : 'Not reported yet'}</td>
              <td className="num">{row.total}</td>
              {STATUSES.map((s) => (
                <td key={s} className="num">
                  {row.counts[s] || <span className="muted">0</span>}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </TableFrame>
  );
}
