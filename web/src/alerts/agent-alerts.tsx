// The agent page's open alerts (overview tab): what is firing or acknowledged on this agent right now,
// with a link to them on the Alerts page. Nothing at all when none are open, or when the server has no
// alerting (an older server): the overview stays as it was.
import { api } from '../api/client';
import { Link } from '../router';
import { Badge, RelativeTime } from '../ui/widgets';
import { useResource } from '../use-resource';
import { useAlertRefresh } from './alert-summary';
import type { Alert } from './alert-types';
import './alerts.css';

const REFRESH_MS = 30_000;

export function AgentAlerts({ agentId }: { agentId: string }) {
  const alerts = useResource((signal) => api<Alert[]>('/alerts', { signal, query: { agent_id: agentId, state: 'open', limit: 20 } }), [agentId], { refreshMs: REFRESH_MS });
  useAlertRefresh(alerts.reload);
  const open = alerts.data ?? [];
  if (open.length === 0) return null;
  return (
    <section className="card agent-alerts" aria-label="Open alerts on this agent" data-testid="agent-alerts">
      <h2>
        {open.length} open alert{open.length === 1 ? '' : 's'}
      </h2>
      <ul>
        {open.map((a) => (
          <li key={a.id} data-testid="agent-alert">
            <Badge tone={a.state === 'firing' ? 'bad' : 'warn'}>{a.state}</Badge> <strong>{a.rule_name}</strong>
            {a.label && <code> {a.label}</code>}: {a.summary} <span className="muted">fired <RelativeTime iso={a.fired_at} /></span>
          </li>
        ))}
      </ul>
      <Link to={`/alerts?agent_id=${encodeURIComponent(agentId)}`}>Open on the Alerts page</Link>
    </section>
  );
}
