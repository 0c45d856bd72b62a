// The technician's tags and note, then the agent's latest system data as readable panels: what every
// platform reports first, then the platform's own (firewall VPN and certificates, hypervisor guests,
// Windows software). The data is the agent's, untrusted: panels read it through safe-data and React
// renders every string as text. A pre-registered agent shows its install commands.
import { PENDING_HOSTNAME } from '../../api/types';
import { Allowed } from '../../auth/access';
import { InstallPanel } from '../../install/install-panel';
import { Empty } from '../../ui/widgets';
import { LabelsPanel } from '../manage/labels-panel';
import type { TabProps } from '../tab-props';
import { DisksPanel, GatewaysPanel, InterfacesPanel, ServicesPanel, SystemPanel, UpdatesPanel } from './common-panels';
import { FirewallPanels } from './firewall-panels';
import { HypervisorPanels } from './hypervisor-panels';
import { WindowsPanels } from './windows-panels';
import './overview.css';

export function OverviewTab({ agent, reload }: TabProps) {
  const system = agent.system;
  // The technician's tags and note come first, and exist before the agent's first heartbeat.
  if (system === null || typeof system !== 'object') {
    return (
      <>
        <div className="panels overview">
          <LabelsPanel agent={agent} onSaved={reload} />
          <Empty>No system data yet: it arrives with the agent's first heartbeat.</Empty>
        </div>
        {agent.hostname === PENDING_HOSTNAME && (
          <Allowed need="write">
            <InstallPanel agentId={agent.id} title={`Install ${agent.name}`} />
          </Allowed>
        )}
      </>
    );
  }
  return (
    <div className="panels overview">
      <LabelsPanel agent={agent} onSaved={reload} />
      <SystemPanel system={system} />
      <UpdatesPanel system={system} />
      <DisksPanel system={system} />
      <GatewaysPanel system={system} />
      {agent.platform === 'linux' && <HypervisorPanels agentId={agent.id} system={system} connected={agent.connected} onChanged={reload} />}
      <InterfacesPanel system={system} />
      <ServicesPanel system={system} />
      {agent.platform === 'freebsd' && <FirewallPanels system={system} />}
      {agent.platform === 'windows' && <WindowsPanels system={system} />}
    </div>
  );
}
