// The Scripts page (issue 33): the script library, the fleet's command history and the bulk actions,
// each tab at its own path (/scripts, /scripts/history, /scripts/bulk) so a link or a reload lands on it.
import type { ComponentType } from 'react';
import { BulkActionList } from '../bulk/bulk-list';
import { HistoryList } from '../history/history-list';
import { SectionTabs } from '../ui/section-tabs';
import { usePageTitle } from '../ui/page-title';
import { ScriptLibrary } from './script-library';
import './scripts.css';

interface Tab {
  id: string;
  label: string;
  component: ComponentType;
}

const FleetHistory = () => <HistoryList path="/history" showAgent />;

const TABS: readonly Tab[] = [
  { id: 'library', label: 'Library', component: ScriptLibrary },
  { id: 'history', label: 'History', component: FleetHistory },
  { id: 'bulk', label: 'Bulk actions', component: BulkActionList },
];

export function ScriptsPage({ tab }: { tab: string }) {
  const current = TABS.find((t) => t.id === tab) ?? TABS[0]!;
  const Current = current.component;
  usePageTitle(current.label, 'Scripts');
  return (
    <section className="scripts-page">
      <h1>Scripts</h1>
      <SectionTabs label="Script sections" base="/scripts" tabs={TABS} current={current.id} />
      <div className="tab-body">
        <Current />
      </div>
    </section>
  );
}
