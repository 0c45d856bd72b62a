// Builds the heartbeat body (contract §2): the identity fields the server requires, the collected system
// data, and what the simulated device adds (pending updates; hypervisor guests on Linux; WireGuard
// servers and peers on FreeBSD; a sample software inventory when playing Windows on another system)
// unless the collected data already carries those categories.
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
  if (device && identity.platform === 'freebsd' && system.vpn === undefined) {
    extra.vpn = { wireguard: { servers: wireguardServers(device) } };
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

/** What a firewall reports of a peer's traffic; a peer without figures (just added) has none yet. */
export type PeerStats = Record<string, unknown>;

/**
 * The device's WireGuard servers and peers as a firewall heartbeat's `vpn.wireguard.servers`: the same
 * peers its vpn_peer_* commands list, add and delete, so the console's VPN tab and overview agree.
 */
export function wireguardServers(device: DeviceView, stats: ReadonlyMap<string, PeerStats> = new Map()): unknown[] {
  return device.vpn.servers.map((server, instance) => ({
    name: server.name,
    instance,
    interface: `wg${instance}`,
    listen_port: server.listen_port,
    public_key: server.public_key,
    tunnel_address: [server.address],
    peers: server.peers.map((p) => ({
      uuid: p.uuid,
      name: p.name,
      public_key: p.public_key,
      tunnel_address: p.tunnel_address,
      endpoint: p.endpoint,
      latest_handshake: 0,
      transfer_rx: 0,
      transfer_tx: 0,
      status: 'offline',
      ...stats.get(p.uuid),
    })),
  }));
}
