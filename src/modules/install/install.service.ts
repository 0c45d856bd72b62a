// Onboarding (issue 33): one-line install commands per platform, and the scripts they fetch. A command
// carries a fresh agent key (an enrollment key when it expires after N days or N uses); the script it
// fetches counts one use of that key and carries the customer's installer key instead, which the agent
// keeps. Both need `backend_url` (the address devices reach this server at): without it, 409.
import type { Kysely } from 'kysely';
import type { Database, Platform } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { AgentService } from '../agents/agents.service.js';
import type { ApiKeyService } from '../api-keys/api-keys.service.js';
import { defaultCustomerOf, scopeAllows, scopeOf, type Caller } from '../auth/caller.js';
import { findCustomer } from '../customers/customers.repo.js';
import type { FirmwareService } from '../firmware/firmware.service.js';
import type { InstallerKeyService } from '../installer/installer-keys.service.js';
import { findInstaller } from '../installer/installer.repo.js';
import type { SettingsService } from '../settings/settings.service.js';
import { powershellInstaller, powershellQuote, shellInstaller, shellQuote } from './install-scripts.js';

const DAY_MS = 86_400_000;

export interface CommandRequest {
  agent_id?: string | undefined;
  customer_id?: number | null | undefined;
  expires_in_days?: number | null | undefined;
  max_uses?: number | null | undefined;
}

export interface InstallCommand {
  platform: Platform;
  shell: 'sh' | 'powershell';
  command: string;
  /** Why it cannot work yet (no agent binary, no installer package), or null. */
  problem: string | null;
}

export interface InstallDeps {
  db: Kysely<Database>;
  apiKeys: ApiKeyService;
  agents: AgentService;
  firmware: FirmwareService;
  installerKeys: InstallerKeyService;
  settings: SettingsService;
  clock: Clock;
}

export class InstallService {
  constructor(private readonly deps: InstallDeps) {}

  /** A new agent key and the install commands that use it, for a pre-registered agent or a customer. */
  async commands(caller: Caller, input: CommandRequest) {
    const serverUrl = await this.serverUrl();
    const target = await this.target(caller, input);
    // Checked before a key is made: a command that cannot install anything is no use.
    if (target.customerId === null && !(await this.deps.settings.secret('installer_api_key'))) {
      throw new AppError('CONFLICT', 'Installing an agent without a customer needs the installer_api_key setting; choose a customer or set it');
    }
    const now = this.deps.clock.now();
    const expiresAt = input.expires_in_days ? new Date(now.getTime() + input.expires_in_days * DAY_MS) : null;
    const key = await this.deps.apiKeys.create(caller, {
      name: `Enrollment: ${target.agentName ?? target.customerName ?? 'no customer'}`.slice(0, 100),
      permissions: 'agent',
      customer_id: target.customerId,
      expires_at: expiresAt,
      max_uses: input.max_uses ?? null,
    });
    const query = target.agentName === null ? '' : `name=${encodeURIComponent(target.agentName)}`;
    const shFor = (platform: 'linux' | 'freebsd') =>
      `curl -fsSL -H ${shellQuote(`X-API-Key: ${key.key}`)} ${shellQuote(`${serverUrl}/api/v1/install/agent.sh?platform=${platform}${query ? `&${query}` : ''}`)} | sh`;
    const psUrl = `${serverUrl}/api/v1/install/agent.ps1${query ? `?${query}` : ''}`;
    const commands: InstallCommand[] = [
      { platform: 'linux', shell: 'sh', command: shFor('linux'), problem: await this.binaryProblem('linux') },
      { platform: 'freebsd', shell: 'sh', command: shFor('freebsd'), problem: await this.binaryProblem('freebsd') },
      {
        platform: 'windows',
        shell: 'powershell',
        command: `iex (iwr -UseBasicParsing -Headers @{'X-API-Key'=${powershellQuote(key.key)}} ${powershellQuote(psUrl)}).Content`,
        problem: await this.binaryProblem('windows'),
      },
    ];
    return { server_url: serverUrl, agent_name: target.agentName, customer_id: target.customerId, key, commands };
  }

  /** The install script for a platform; counts one use of the caller's key. */
  async script(caller: Caller, kind: 'sh' | 'ps1', platform: Platform, agentName: string | null): Promise<string> {
    const serverUrl = await this.serverUrl();
    const problem = await this.binaryProblem(platform);
    if (problem) throw new AppError('CONFLICT', problem);
    const customerId = defaultCustomerOf(caller);
    const agentKey = customerId === null ? await this.deps.settings.secret('installer_api_key') : await this.deps.installerKeys.keyFor(customerId);
    if (!agentKey) throw new AppError('CONFLICT', 'An install with an unscoped key needs the installer_api_key setting; use a customer\'s key or set it');
    await this.deps.apiKeys.countUse(caller);
    const values = { serverUrl, agentKey, agentName, madeAt: this.deps.clock.now() };
    return kind === 'ps1' ? powershellInstaller(values) : shellInstaller(platform as 'linux' | 'freebsd', values);
  }

  private async serverUrl(): Promise<string> {
    const { backend_url: url } = await this.deps.settings.agentUrls();
    if (!url) throw new AppError('BACKEND_URL_UNSET', "Set this server's address for devices first (Settings, Backend URL; the setting backend_url): install commands need the address devices reach this server at");
    return url.replace(/\/+$/, '');
  }

  private async target(caller: Caller, input: CommandRequest) {
    if (input.agent_id !== undefined) {
      if (input.customer_id !== undefined) throw new AppError('VALIDATION_ERROR', 'Give agent_id or customer_id, not both');
      const agent = await this.deps.agents.get(caller, input.agent_id);
      const customer = agent.customer_id === null ? undefined : await findCustomer(this.deps.db, agent.customer_id);
      return { agentName: agent.name, customerId: agent.customer_id, customerName: customer?.name ?? null };
    }
    const customerId = input.customer_id ?? defaultCustomerOf(caller);
    if (customerId === null) return { agentName: null, customerId: null, customerName: null };
    const customer = await findCustomer(this.deps.db, customerId);
    if (!customer || !scopeAllows(scopeOf(caller), customerId)) throw new AppError('NOT_FOUND', 'Customer not found');
    return { agentName: null, customerId, customerName: customer.name };
  }

  private async binaryProblem(platform: Platform): Promise<string | null> {
    if (platform === 'windows') {
      return (await findInstaller(this.deps.db, 'windows')) ? null : 'No installer package for Windows has been uploaded (Firmware page)';
    }
    return (await this.deps.firmware.latest(platform)) ? null : `No agent binary (firmware) for ${platform} has been uploaded (Firmware page)`;
  }
}
