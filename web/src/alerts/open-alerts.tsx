// The open alerts (firing first, then acknowledged; newest first within each), refreshed every 15 s and
// whenever this console acknowledged or resolved one. With ?agent_id= only that agent's (the agent page
// links here so). "Acknowledge all N firing" acknowledges those shown in one request.
import { useMemo } from 'react';
import { Link, useQuery } from '../router';
import { Empty, ErrorBanner, Loading, LoadMore } from '../ui/widgets';
import { usePagedList } from '../use-paged-list';
import { AcknowledgeAll } from './acknowledge-all';
import { AlertCard } from './alert-card';
import { refreshAlertSummary, useAlertRefresh } from './alert-summary';
import type { Alert } from './alert-types';
import type { Directory } from './use-directory';

const REFRESH_MS = 15_000;
const PAGE = 100;

const STATE_ORDER: Record<string, number> = { firing: 0, acknowledged: 1, resolved: 2 };

export function OpenAlerts({ directory }: { directory: Directory }) {
  const agentId = useQuery().get('agent_id') ?? undefined;
  const list = usePagedList<Alert>('/alerts', { state: 'open', agent_id: agentId }, { pageSize: PAGE, refreshMs: REFRESH_MS });
  useAlertRefresh(list.reload);
  const alerts = useMemo(
    () => [...(list.items ?? [])].sort((a, b) => (STATE_ORDER[a.state] ?? 3) - (STATE_ORDER[b.state] ?? 3) || b.fired_at.localeCompare(a.fired_at) || b.id - a.id),
    [list.items],
  );
  const firing = alerts.filter((a) => a.state === 'firing').length;
  const agent = agentId ? directory.agentById.get(agentId) : undefined;
  const changed = () => {
    list.reload();
    refreshAlertSummary();
  };

  return (
    <section aria-label="Open alerts">
      <div className="row alerts-status">
        {list.items && (
          <span data-testid="open-alert-count">
            {alerts.length}
            {list.hasMore ? '+' : ''} open, {firing} firing
          </span>
        )}
        {agentId && (
          <span className="filter-chip">
            Agent {agent?.name ?? agentId.slice(0, 12)} <Link to="/alerts">show all</Link>
          </span>
        )}
        <span className="muted">Refreshed every 15 s</span>
      </div>
      {list.items && <AcknowledgeAll ids={alerts.filter((a) => a.state === 'firing').map((a) => a.id)} onChanged={changed} />}
      <ErrorBanner error={list.error} />
      {!list.items ? (
        !list.error && <Loading />
      ) : alerts.length === 0 ? (
        <Empty>Nothing open: every rule is quiet.</Empty>
      ) : (
        <div className="alert-cards">
          {alerts.map((a) => (
            <AlertCard key={a.id} alert={a} customers={directory.customerById} onChanged={changed} />
          ))}
        </div>
      )}
      <LoadMore list={list} />
    </section>
  );
}
