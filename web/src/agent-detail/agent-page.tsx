// One agent: a header with who and how it is, and a tab per concern. The agent (with its system data)
// is reloaded every 30 s so status and panels stay current while the technician works in a tab. The
// device tabs (Shell, Files, Processes, Services) show only for an agent that offers them; a link to one
// it does not offer says so instead of falling back to another tab.
import { lazy, Suspense, type ComponentType } from 'react';
import { allows, useAccess, type Need } from '../auth/access';
import { AgentAlerts } from '../alerts/agent-alerts';
import { api } from '../api/client';
import { hostnameText, PLATFORM_LABELS, type AgentDetail, type Platform } from '../api/types';
import { UpdaterReportNote } from '../firmware/updater-report';
import { Link } from '../router';
import { usePageTitle } from '../ui/page-title';
import { useResource } from '../use-resource';
import { ErrorBanner, Loading, RelativeTime, StatusBadge } from '../ui/widgets';
import { notOfferedText } from './device/device-gate';
import type { DeviceCapability } from './device/device-types';
import { FilesTab } from './files/files-tab';
import { ProcessesTab } from './processes/processes-tab';
import { RecordingsTab } from './recordings/recordings-tab';
import { ServicesTab } from './services/services-tab';
import { AgentHistoryTab } from '../history/agent-history-tab';
import { AgentChecksTab } from '../checks/agent-checks-tab';
import { ActionsTab } from './actions/actions-tab';
import { BackupsTab } from './backups/backups-tab';
import { EventsTab } from './events/events-tab';
import { MetricsTab } from './metrics/metrics-tab';
import { OverviewTab } from './overview/overview-tab';
import type { TabProps } from './tab-props';
import { TunnelsTab } from './tunnels/tunnels-tab';
import { VpnTab } from './vpn/vpn-tab';

// xterm.js loads with the Shell tab only, noVNC with the Remote desktop tab.
const ShellTab = lazy(() => import('./shell/shell-tab').then((m) => ({ default: m.ShellTab })));
const DesktopTab = lazy(() => import('./desktop/desktop-tab').then((m) => ({ default: m.DesktopTab })));

interface Tab {
  id: string;
  label: string;
  component: ComponentType<TabProps>;
  /** Only for these platforms (all when absent). */
  platforms?: readonly Platform[];
  /** Only for users who may do this (the Actions tab holds nothing but changes). */
  need?: Need;
  /** Only for agents that offer this (issue 59's device sessions). */
  capability?: DeviceCapability;
}

const TABS: readonly Tab[] = [
  { id: 'overview', label: 'Overview', component: OverviewTab },
  { id: 'metrics', label: 'Metrics', component: MetricsTab },
  { id: 'checks', label: 'Checks', component: AgentChecksTab },
  { id: 'events', label: 'Events', component: EventsTab },
  { id: 'backups', label: 'Backups', component: BackupsTab, platforms: ['freebsd'] },
  { id: 'tunnels', label: 'Tunnels', component: TunnelsTab },
  { id: 'vpn', label: 'VPN peers', component: VpnTab, platforms: ['freebsd'] },
  // No `need`: read users may watch where the settings allow it (the server decides; the tab says so).
  { id: 'desktop', label: 'Remote desktop', component: DesktopTab },
  { id: 'shell', label: 'Shell', component: ShellTab, need: 'write', capability: 'shell' },
  { id: 'files', label: 'Files', component: FilesTab, need: 'write', capability: 'files' },
  { id: 'processes', label: 'Processes', component: ProcessesTab, capability: 'processes' },
  { id: 'services', label: 'Services', component: ServicesTab, capability: 'services' },
  { id: 'actions', label: 'Actions', component: ActionsTab, need: 'write' },
  { id: 'recordings', label: 'Recordings', component: RecordingsTab },
  { id: 'history', label: 'History', component: AgentHistoryTab },
];

const REFRESH_MS = 30_000;

export function AgentPage({ id, tab }: { id: string; tab: string }) {
  const agent = useResource((signal) => api<AgentDetail>(`/agents/${encodeURIComponent(id)}`, { signal }), [id], { refreshMs: REFRESH_MS });
  const access = useAccess();
  usePageTitle(agent.data?.name ?? 'Agent', (TABS.find((t) => t.id === tab) ?? TABS[0])?.label);
  if (!agent.data) return agent.error ? <ErrorBanner error={agent.error} /> : <Loading />;
  const a = agent.data;
  const allowed = TABS.filter((t) => (!t.platforms || (a.platform !== null && t.platforms.includes(a.platform))) && allows(access, t.need));
  const tabs = allowed.filter((t) => !t.capability || a.capabilities.includes(t.capability));
  // A device tab the agent does not offer (a bookmark, an agent downgraded): the sentence, not Overview.
  const notOffered = allowed.find((t) => t.id === tab && t.capability && !a.capabilities.includes(t.capability))?.capability;
  const missing = allowed.flatMap((t) => (t.capability && !a.capabilities.includes(t.capability) ? [t.capability] : []));
  const current = tabs.find((t) => t.id === tab) ?? tabs[0]!;
  const Current = current.component;
  return (
    <section>
      <p className="crumbs">
        <Link to="/agents">Agents</Link> / {a.name}
      </p>
      <div className="agent-head">
        <h1>{a.name}</h1>
        <StatusBadge status={a.status} />
        {a.connected ? <span className="badge badge-good">connected</span> : <span className="badge badge-muted">not connected</span>}
        {a.update_requested ? (
          <Link to="/firmware" className="badge badge-warn" title="The agent updates itself to the latest firmware at its updater's next check">
            update requested
          </Link>
        ) : null}
        <UpdaterReportNote report={a.updater} />
      </div>
      <p className="muted agent-facts">
        <span>{hostnameText(a.hostname)}</span>
        <span>{a.platform ? PLATFORM_LABELS[a.platform] : 'platform unknown'}</span>
        <span>agent {a.agent_version ?? '–'}</span>
        <span>
          last heartbeat <RelativeTime iso={a.last_heartbeat} />
        </span>
        <span className="mono">{a.id}</span>
      </p>
      <ErrorBanner error={agent.error} />
      <nav className="tabs" aria-label="Agent sections">
        {tabs.map((t) => (
          <Link key={t.id} to={`/agents/${a.id}/${t.id}`} aria-current={t.id === current.id && !notOffered ? 'page' : undefined}>
            {t.label}
          </Link>
        ))}
      </nav>
      <div className="tab-body">
        {notOffered ? (
          <p className="banner banner-info">{notOfferedText([notOffered])}</p>
        ) : (
          <>
            {current.id === 'overview' && missing.length > 0 && (
              <p className="muted" data-testid="not-offered">
                {notOfferedText(missing)}
              </p>
            )}
            {current.id === 'overview' && <AgentAlerts agentId={a.id} />}
            <Suspense fallback={<Loading />}>
              <Current agent={a} reload={agent.reload} />
            </Suspense>
          </>
        )}
      </div>
    </section>
  );
}
