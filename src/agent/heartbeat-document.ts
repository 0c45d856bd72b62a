// Builds the heartbeat body (contract §2): the identity fields the server requires, the collected system
// data, and what the simulated device adds (pending updates; hypervisor guests on Linux; a sample
// software inventory when playing Windows on another system) unless the collected data already carries
// those categories.
import type { DeviceView, Platform } from './device-state.js';
import { SAMPLE_SOFTWARE } from './software-inventory.js';

export interface HeartbeatIdentity {
  agentId: string | null;
  platform: Platform;
  hostname: string;
  agentVersion: string;
  /** SHA-256 of the agent's binary (contract §2 `agent_sha256`); absent when it has none or cannot read it. */
  agentSha256?: string | undefined;
}

export function heartbeatDocument(identity: HeartbeatIdentity, collected: Record<string, unknown>, device: DeviceView | null): Record<string, unknown> {
  const { hostname: _collectedHostname, ...system } = collected;
  const extra: Record<string, unknown> = {};
  if (device && system.updates === undefined) {
    extra.updates = {
      available: device.pending_updates.length > 0,
      packages: device.pending_updates.map((u) => ({ name: u.name, current: u.current, available: u.new, security: u.security })),
      needs_reboot: device.reboot_required,
    };
  }
  if (device && identity.platform === 'linux' && system.hypervisor === undefined) {
    extra.hypervisor = { node: identity.hostname, version: device.version, ...hypervisorGuests(device) };
  }
  // On real Windows a missing list means the registry could not be read: sending samples would replace
  // the machine's real inventory on the server.
  if (device && identity.platform === 'windows' && system.software === undefined && process.platform !== 'win32') {
    extra.software = SAMPLE_SOFTWARE;
  }
  return {
    agent_id: identity.agentId,
    platform: identity.platform,
    hostname: identity.hostname,
    agent_version: identity.agentVersion,
    ...(identity.agentSha256 !== undefined ? { agent_sha256: identity.agentSha256 } : {}),
    ...system,
    ...extra,
  };
}

/** The device's guests as a heartbeat's `hypervisor.guests` (VMs) and `hypervisor.containers`. */
export function hypervisorGuests(device: DeviceView): { guests: unknown[]; containers: unknown[] } {
  const of = (type: 'vm' | 'container') =>
    device.guests.filter((g) => g.type === type).map((g) => ({ vmid: g.vmid, name: g.name, type: type === 'vm' ? 'qemu' : 'lxc', status: g.status, node: g.node }));
  return { guests: of('vm'), containers: of('container') };
}
