// Builds the heartbeat body (contract §2): the identity fields the server requires, the collected system
// data, and what the simulated device adds (pending updates; hypervisor guests on Linux) unless the
// collected data already carries those categories.
import type { DeviceState, Platform } from './device-state.js';

export interface HeartbeatIdentity {
  agentId: string | null;
  platform: Platform;
  hostname: string;
  agentVersion: string;
}

export function heartbeatDocument(identity: HeartbeatIdentity, collected: Record<string, unknown>, device: DeviceState | null): Record<string, unknown> {
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
    const guests = (type: 'vm' | 'container') =>
      device.guests
        .filter((g) => g.type === type)
        .map((g) => ({ vmid: g.vmid, name: g.name, type: type === 'vm' ? 'qemu' : 'lxc', status: g.status, node: g.node }));
    extra.hypervisor = { node: identity.hostname, version: device.version, guests: guests('vm'), containers: guests('container') };
  }
  return {
    agent_id: identity.agentId,
    platform: identity.platform,
    hostname: identity.hostname,
    agent_version: identity.agentVersion,
    ...system,
    ...extra,
  };
}
