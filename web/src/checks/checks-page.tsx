// The Checks page (issue 61): the fleet's failing checks first, where a technician starts, then the
// policies that say what every agent checks. Each tab at its own path (/checks, /checks/policies) so a
// link or a reload lands on it. Policies are server-wide: the tab shows only for users with every
// customer, as the server refuses the list to everyone else.
import type { ComponentType } from 'react';
import { useAccess } from '../auth/access';
import { SectionTabs } from '../ui/section-tabs';
import { usePageTitle } from '../ui/page-title';
import { FailingTab } from './failing-tab';
import { PoliciesTab } from './policies-tab';
import './checks.css';

interface Tab {
  id: string;
  label: string;
  component: ComponentType;
  /** Policies name customers: only for users who see every customer. */
  unscopedOnly?: boolean;
}

const TABS: readonly Tab[] = [
  { id: 'failing', label: 'Failing', component: FailingTab },
  { id: 'policies', label: 'Policies', component: PoliciesTab, unscopedOnly: true },
];

export function ChecksPage({ tab }: { tab: string }) {
  const access = useAccess();
  const tabs = TABS.filter((t) => !t.unscopedOnly || !access.scoped);
  const current = tabs.find((t) => t.id === tab) ?? tabs[0]!;
  const Current = current.component;
  usePageTitle(current.id === 'failing' ? 'Failing checks' : current.label, 'Checks');
  return (
    <section className="checks-page">
      <h1>Checks</h1>
      <SectionTabs label="Checks sections" base="/checks" tabs={tabs} current={current.id} />
      <div className="tab-body">
        <Current />
      </div>
    </section>
  );
}
