// Hands on the device need two things the agent page knows: an agent that offers the capability (it
// says so in its hello; older agents offer none) and a live connection. Without either a tab shows why,
// in a sentence, instead of controls that could only fail.
import type { ComponentType, ReactNode } from 'react';
import type { AgentDetail } from '../../api/types';
import { RelativeTime } from '../../ui/widgets';
import type { TabProps } from '../tab-props';
import type { DeviceCapability } from './device-types';

const NAMES: Record<DeviceCapability, string> = { shell: 'a shell', files: 'files', processes: 'processes', services: 'services', checks: 'checks' };

/** "a shell, files and services": the capabilities in words. */
export function capabilityWords(capabilities: readonly DeviceCapability[]): string {
  const words = capabilities.map((c) => NAMES[c]);
  return words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

/** The honest sentence for capabilities an agent does not offer. */
export function notOfferedText(missing: readonly DeviceCapability[]): string {
  return `This agent does not offer ${capabilityWords(missing)}: its agent version or platform does not support ${missing.length === 1 ? 'it' : 'them'}.`;
}

/** Its children when the agent offers `capability` and is connected; else the sentence saying why not. */
export function DeviceGate({ agent, capability, children }: { agent: AgentDetail; capability: DeviceCapability; children: ReactNode }) {
  if (!agent.capabilities.includes(capability)) return <p className="banner banner-info">{notOfferedText([capability])}</p>;
  if (!agent.connected) {
    return (
      <p className="banner banner-warn" role="status">
        The agent is not connected, so its {capability === 'shell' ? 'shell' : capability} cannot be reached now (last heartbeat <RelativeTime iso={agent.last_heartbeat} />
        ). This tab works again once the agent reconnects.
      </p>
    );
  }
  return <>{children}</>;
}

/** A device tab: `Inner` behind the gate of `capability`. */
export function gatedTab(capability: DeviceCapability, Inner: ComponentType<{ agent: AgentDetail }>): ComponentType<TabProps> {
  return function GatedTab({ agent }: TabProps) {
    return (
      <DeviceGate agent={agent} capability={capability}>
        <Inner agent={agent} />
      </DeviceGate>
    );
  };
}
