// The Alerts page (issue 31): the open incidents first, then the history, and the tabs that configure
// alerting — rules, channels, maintenance windows — each at its own path (/alerts, /alerts/history,
// /alerts/rules, /alerts/channels, /alerts/maintenance) so a link or a reload lands on the same tab.
import type { ComponentType } from 'react';
import { SectionTabs } from '../ui/section-tabs';
import { usePageTitle } from '../ui/page-title';
import { ErrorBanner } from '../ui/widgets';
import { AlertHistory } from './alert-history';
import { ChannelsTab } from './channels-tab';
import { MaintenanceTab } from './maintenance-tab';
import { OpenAlerts } from './open-alerts';
import { RulesTab } from './rules-tab';
import { useDirectory, type Directory } from './use-directory';
import './alerts.css';

interface Tab {
  id: string;
  label: string;
  component: ComponentType<{ directory: Directory }>;
}

const TABS: readonly Tab[] = [
  { id: 'open', label: 'Open', component: OpenAlerts },
  { id: 'history', label: 'History', component: AlertHistory },
  { id: 'rules', label: 'Rules', component: RulesTab },
  { id: 'channels', label: 'Channels', component: ChannelsTab },
  { id: 'maintenance', label: 'Maintenance', component: MaintenanceTab },
];

export function AlertsPage({ tab }: { tab: string }) {
  const directory = useDirectory();
  const current = TABS.find((t) => t.id === tab) ?? TABS[0]!;
  const Current = current.component;
  // Each tab names itself in the browser's tab ("Rules · Alerts · RMM"), as the Scripts tabs do.
  usePageTitle(current.id === 'open' ? 'Open alerts' : current.label, 'Alerts');
  return (
    <section className="alerts-page">
      <h1>Alerts</h1>
      <SectionTabs label="Alerting sections" base="/alerts" tabs={TABS} current={current.id} />
      <div className="tab-body">
        <ErrorBanner error={directory.error} />
        <Current directory={directory} />
      </div>
    </section>
  );
}
