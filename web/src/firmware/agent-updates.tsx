// Which agents are asked to update: the flag per agent (set, withdraw) and for all at once, and what each
// one's updater last reported. The updater on the device clears the flag after updating, so the list
// refreshes on its own. A page of 100 at a time, by name, with "Load more"; a pre-registered agent that has
// never registered has no platform, so no firmware to update to, and offers no request.
import { useState } from 'react';
import type { ApiBody } from '../api/api-types';
import { api } from '../api/client';
import { PLATFORM_LABELS, type Agent, type Platform } from '../api/types';
import { Link, setQuery, useQuery } from '../router';
import { useActionError } from '../ui/use-action-error';
import { ActionsHeader, Badge, ConfirmButton, Empty, ErrorBanner, Loading, LoadMore, StatusBadge } from '../ui/widgets';
import { usePagedList } from '../use-paged-list';
import type { Firmware } from './firmware-types';
import { UpdaterReportBadge } from './updater-report';
import { Allowed } from '../auth/access';
import { TableFrame } from '../ui/table-frame';

const REFRESH_MS = 30_000;
const PAGE = 100;

export function AgentUpdates({ firmware }: { firmware: readonly Firmware[] }) {
  const platformParam = useQuery().get('platform');
  const platform = (Object.keys(PLATFORM_LABELS) as Platform[]).find((p) => p === platformParam);
  const agents = usePagedList<Agent>('/agents', { platform, sort: 'name' }, { pageSize: PAGE, refreshMs: REFRESH_MS });
  const { error, guard } = useActionError();
  const [busyId, setBusyId] = useState<string>();
  const [flagged, setFlagged] = useState<number>();
  // The server's answer shows at once, until the reload it triggers brings a newer list.
  const [answered, setAnswered] = useState<{ list: Agent[] | undefined; flags: Record<string, boolean> }>({ list: undefined, flags: {} });
  const requested = (agent: Agent) => (answered.list === agents.items ? answered.flags[agent.id] : undefined) ?? agent.update_requested;
  // The list arrives highest version first per platform.
  const latest = (p: Platform | null) => firmware.find((f) => f.platform === p)?.version;

  const setFlag = (agent: Agent, wanted: boolean) =>
    guard(async () => {
      setBusyId(agent.id);
      try {
        const answer = await api<ApiBody<'/agents/{id}/request-update', 'post' | 'delete'>>(`/agents/${encodeURIComponent(agent.id)}/request-update`, { method: wanted ? 'POST' : 'DELETE' });
        setAnswered((prev) => ({ list: agents.items, flags: { ...(prev.list === agents.items ? prev.flags : {}), [agent.id]: answer.update_requested } }));
        agents.reload();
      } finally {
        setBusyId(undefined);
      }
    });
  const requestAll = () =>
    guard(async () => {
      setFlagged(undefined);
      // The list's platform filter limits it too: "all" means all that are shown.
      setFlagged((await api<ApiBody<'/agents/request-update-all', 'post'>>('/agents/request-update-all', { method: 'POST', body: {}, query: { platform } })).updated);
      agents.reload();
    });

  return (
    <section aria-label="Agent updates">
      <h2>Agent updates</h2>
      <p className="muted">
        A flagged agent updates itself at its updater&apos;s next check (every minute) when the latest firmware for its platform differs from what it
        runs.
      </p>
      <div className="row">
        <label>
          Show
          <select value={platform ?? ''} onChange={(e) => setQuery({ platform: e.target.value || undefined })}>
            <option value="">All</option>
            {(Object.keys(PLATFORM_LABELS) as Platform[]).map((p) => (
              <option key={p} value={p}>
                {PLATFORM_LABELS[p]}
              </option>
            ))}
          </select>
        </label>
        <Allowed need="write">
          <ConfirmButton
            label={platform ? `Request update for all ${PLATFORM_LABELS[platform]} agents` : 'Request update for all'}
            question={platform ? `Flag every ${PLATFORM_LABELS[platform]} agent you can see?` : 'Flag every agent you can see, on all platforms?'}
            busyLabel="Requesting…"
            onConfirm={requestAll}
          />
        </Allowed>
      </div>
      {flagged !== undefined && (
        <div className="banner banner-info" role="status">
          {`Update requested for ${flagged} ${flagged === 1 ? 'agent' : 'agents'}.`}
        </div>
      )}
      <ErrorBanner error={agents.error ?? error} />
      {!agents.items ? (
        !agents.error && <Loading />
      ) : agents.items.length === 0 ? (
        <Empty>{platform ? `No ${PLATFORM_LABELS[platform]} agents.` : 'No agents yet.'}</Empty>
      ) : (
        <TableFrame label="Agent updates">
          <table data-testid="firmware-agents-table" className="stack">
            <thead>
              <tr>
                <th>Agent</th>
                <th>Status</th>
                <th>Platform</th>
                <th>Agent version</th>
                <th>Latest firmware</th>
                <th>Update requested</th>
                <th>Updater</th>
                <ActionsHeader />
              </tr>
            </thead>
            <tbody>
              {agents.items.map((agent) => (
                <tr key={agent.id} data-testid="firmware-agent-row">
                  <td>
                    <Link to={`/agents/${encodeURIComponent(agent.id)}`}>{agent.name}</Link>
                  </td>
                  <td data-label="Status">
                    <StatusBadge status={agent.status} />
                  </td>
                  <td data-label="Platform">{agent.platform ? PLATFORM_LABELS[agent.platform] : <span className="muted">not yet known</span>}</td>
                  <td data-label="Agent version" className="mono">{agent.agent_version ?? '–'}</td>
                  <td data-label="Latest firmware" className="mono">{latest(agent.platform) ?? <span className="muted">none</span>}</td>
                  <td data-label="Update requested">{requested(agent) ? <Badge tone="warn">yes</Badge> : <Badge tone="muted">no</Badge>}</td>
                  <td data-label="Updater">
                    <UpdaterReportBadge report={agent.updater} />
                  </td>
                  <td>
                    <Allowed need="write">
                      {agent.platform === null && !requested(agent) ? (
                        <span className="muted">not registered yet</span>
                      ) : requested(agent) ? (
                        <button type="button" disabled={busyId === agent.id} onClick={() => void setFlag(agent, false)}>
                          Withdraw
                        </button>
                      ) : (
                        <button type="button" disabled={busyId === agent.id} onClick={() => void setFlag(agent, true)}>
                          Request update
                        </button>
                      )}
                    </Allowed>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
      <LoadMore list={agents} />
    </section>
  );
}
