// An agent's Checks tab (issue 61): the checks its policies give it, each with its latest state, and
// the chosen one's history, perfdata charts and override (kept in the URL as ?check=, so the failing
// view can link straight to it). An agent older than checks runs none: the tab says so and shows nothing else.
import { useEffect, useState } from 'react';
import type { TabProps } from '../agent-detail/tab-props';
import { api } from '../api/client';
import { Link, useQuery } from '../router';
import { TableFrame } from '../ui/table-frame';
import { Badge, Empty, ErrorBanner, Loading, RelativeTime } from '../ui/widgets';
import { useResource } from '../use-resource';
import { CheckDetail } from './check-detail';
import { CheckStateBadge } from './check-state-badge';
import { kindLabel, type AgentChecks, type CheckOverride } from './check-types';
import { ExcludedChecks } from './override-form';
import './checks.css';

const REFRESH_MS = 30_000;
/**
 * While a connected agent's check awaits its first result (a policy just saved), its state comes within
 * seconds: look sooner. An agent that is away sends nothing, so it is not asked about more often.
 */
const PENDING_REFRESH_MS = 5_000;

export function AgentChecksTab({ agent }: TabProps) {
  const [pending, setPending] = useState(false);
  const checks = useResource((signal) => api<AgentChecks>(`/agents/${encodeURIComponent(agent.id)}/checks`, { signal }), [agent.id], { refreshMs: pending ? PENDING_REFRESH_MS : REFRESH_MS });
  const anyPending = agent.connected && checks.data?.supported === true && checks.data.checks.some((c) => c.state === null);
  useEffect(() => setPending(anyPending), [anyPending]);
  const overrides = useResource((signal) => api<CheckOverride[]>(`/agents/${encodeURIComponent(agent.id)}/check-overrides`, { signal }), [agent.id]);
  const chosenId = useQuery().get('check');
  const changed = () => {
    checks.reload();
    overrides.reload();
  };
  if (!checks.data) return checks.error ? <ErrorBanner error={checks.error} /> : <Loading />;
  const { supported, checks: list } = checks.data;
  if (!supported) {
    return (
      <p className="banner banner-info" data-testid="checks-unsupported">
        This agent does not run checks: its version predates them.
        {list.length > 0 && ` Updated, it would run the ${list.length === 1 ? 'check' : `${list.length} checks`} its policies give it.`}
      </p>
    );
  }
  const chosen = list.find((c) => c.id === chosenId);
  const base = `/agents/${encodeURIComponent(agent.id)}/checks`;
  return (
    <div className="agent-checks">
      <ErrorBanner error={checks.error ?? overrides.error} />
      {list.length === 0 ? (
        <Empty>No policy gives this agent checks.</Empty>
      ) : (
        <TableFrame label="Checks">
          <table className="stack-table checks-table" data-testid="agent-checks">
            <thead>
              <tr>
                <th>State</th>
                <th>Check</th>
                <th>Policy</th>
                <th>Kind</th>
                <th>Output</th>
                <th>Last run</th>
                <th>Since</th>
              </tr>
            </thead>
            <tbody>
              {list.map((c) => (
                <tr key={c.id} data-testid="check-row" className={c.id === chosen?.id ? 'chosen' : undefined}>
                  <td>
                    <CheckStateBadge state={c.state} />
                  </td>
                  <td data-label="Check">
                    <Link to={`${base}?check=${encodeURIComponent(c.id)}`} aria-current={c.id === chosen?.id ? 'true' : undefined}>
                      {c.name}
                    </Link>{' '}
                    {c.overridden && <Badge tone="muted">overridden</Badge>}
                  </td>
                  <td data-label="Policy">{c.policy_name}</td>
                  <td data-label="Kind">{kindLabel(c.kind)}</td>
                  <td data-label="Output" className="check-output">
                    {c.output ?? <span className="muted">no result yet</span>}
                  </td>
                  <td data-label="Last run" className="nowrap">
                    <RelativeTime iso={c.last_run_at} />
                  </td>
                  <td data-label="Since" className="nowrap">
                    <RelativeTime iso={c.last_change_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
      <ExcludedChecks agentId={agent.id} overrides={overrides.data ?? []} onChanged={changed} />
      {chosen ? (
        <CheckDetail key={chosen.id} agentId={agent.id} check={chosen} override={overrides.data?.find((o) => o.check_id === chosen.id)} overridesLoaded={overrides.data !== undefined} onChanged={changed} />
      ) : (
        list.length > 0 && <p className="muted">Choose a check for its history, its perfdata and its override.</p>
      )}
    </div>
  );
}
