// Who may put hands on which device (issue 59), as one guard every device route calls before it asks
// the agent anything:
// - the agent must be within the caller's customer scope (else 404, as everywhere);
// - a device shell: signed-in users with write or admin only; API keys never (403), as the spec's terminal;
// - files, processes and services: write/admin users; API keys (write/admin) only while the setting
//   device_api_keys is on; read users and read keys may list processes and services, nothing else;
// - the agent must have announced the capability (409 AGENT_UNSUPPORTED), and be connected (409).
import { AppError } from '../../platform/errors.js';
import type { AgentCommander } from '../agent-hub/agent-commander.js';
import type { DeviceCapability } from '../agent-hub/device-protocol.js';
import type { Agent, AgentService } from '../agents/agents.service.js';
import { levelOf } from '../auth/access-policy.js';
import type { Caller } from '../auth/caller.js';
import type { SettingsService } from '../settings/settings.service.js';

/** What the caller wants to do: open a shell, change something on the device, or only look. */
export type DeviceUse = 'shell' | 'change' | 'view';

const CAPABILITY_LABEL: Record<DeviceCapability, string> = {
  shell: 'a device shell',
  files: 'files',
  processes: 'processes',
  services: 'services',
  checks: 'checks',
};

export class DeviceAccess {
  constructor(
    private readonly agents: AgentService,
    private readonly commander: AgentCommander,
    private readonly settings: SettingsService,
  ) {}

  /**
   * The agent, once the caller may `use` its `capability` and it is connected; throws the contract's
   * error otherwise. `connected` false skips the connection check (listing recordings of an away agent).
   */
  async check(caller: Caller, agentId: string, capability: DeviceCapability, use: DeviceUse, connected = true): Promise<Agent> {
    const agent = await this.agents.get(caller, agentId); // 404 outside the caller's scope
    this.#mayUse(caller, capability, use, await this.#keysAllowed(caller));
    if (!agent.capabilities.includes(capability)) {
      throw new AppError('AGENT_UNSUPPORTED', `This agent does not support ${CAPABILITY_LABEL[capability]} (its version ${agent.agent_version ?? 'unknown'} does not announce it)`);
    }
    if (connected && !this.commander.isConnected(agent.id)) throw new AppError('AGENT_NOT_CONNECTED', 'The agent is not connected');
    return agent;
  }

  async #keysAllowed(caller: Caller): Promise<boolean> {
    return caller.kind === 'api_key' ? (await this.settings.device()).device_api_keys : true;
  }

  #mayUse(caller: Caller, capability: DeviceCapability, use: DeviceUse, keysAllowed: boolean): void {
    if (capability === 'shell' || use === 'shell') {
      if (caller.kind !== 'user') throw new AppError('FORBIDDEN', 'A device shell takes a signed-in user; API keys never open one');
      if (levelOf(caller) === 'read') throw new AppError('FORBIDDEN', 'A device shell needs the write or admin role');
      return;
    }
    if (caller.kind === 'api_key' && !keysAllowed) {
      throw new AppError('FORBIDDEN', 'API keys may not use files, processes or services on devices (setting device_api_keys is off)');
    }
    const level = levelOf(caller);
    if (level === 'agent') throw new AppError('FORBIDDEN', 'Agent keys have no access to devices');
    if (level === 'read' && (use !== 'view' || capability === 'files')) {
      throw new AppError('FORBIDDEN', capability === 'files' ? 'Files on devices need the write or admin role' : 'This needs the write or admin role');
    }
  }
}
