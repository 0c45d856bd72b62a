// VPN peer commands on the simulated firewall. vpn_peer_add follows the spec's create sequence exactly:
// 1. generate a keypair, 2. assign the next free tunnel address, 3. write the peer into the device
// configuration under its server, 4. reload the VPN service, 5. answer with the client configuration.
import { randomUUID } from 'node:crypto';
import type { CommandParams } from '../../modules/agent-hub/agent-protocol.js';
import type { DeviceState, DeviceView, VpnPeer } from '../device-state.js';
import { clientConfig, endpointWithPort, generateWireGuardKeyPair, nextFreeAddress, parseSubnet } from '../wireguard.js';
import { CommandError, type CommandContext } from './types.js';

/** The peer as the server sees it (contract §8). */
export type PeerView = Omit<VpnPeer, 'created_at'>;

function peerView(peer: VpnPeer): PeerView {
  return {
    uuid: peer.uuid,
    name: peer.name,
    server_name: peer.server_name,
    tunnel_address: peer.tunnel_address,
    public_key: peer.public_key,
    allowed_ips: peer.allowed_ips,
    dns: peer.dns,
    endpoint: peer.endpoint,
  };
}

function serverNamed<D extends DeviceView>(device: D, name: string): D['vpn']['servers'][number] {
  const server = device.vpn.servers.find((s) => s.name === name);
  if (!server) {
    const known = device.vpn.servers.map((s) => s.name).join(', ') || 'none';
    throw new CommandError(`unknown VPN server ${name} (configured: ${known})`);
  }
  return server;
}

export async function vpnPeerAdd(params: CommandParams<'vpn_peer_add'>, ctx: CommandContext) {
  serverNamed(ctx.device.device, params.server_name); // fail before generating anything
  // Step 1: a keypair generated on the device; the private key leaves only inside client_config.
  const keys = generateWireGuardKeyPair();
  const { peer, serverPublicKey } = await ctx.device.update((device) => {
    const server = serverNamed(device, params.server_name);
    // Step 2: the next free host address of the tunnel subnet (the server's own and peers' are taken).
    const taken = [server.address, ...device.vpn.servers.flatMap((s) => s.peers.map((p) => p.tunnel_address))];
    const address = nextFreeAddress(parseSubnet(server.address), taken);
    if (!address) throw new CommandError(`no free address left in the tunnel subnet of ${server.name}`);
    // Step 3: the peer is written into the configuration, attached to its server.
    const added: VpnPeer = {
      uuid: randomUUID(),
      name: params.name,
      server_name: server.name,
      tunnel_address: `${address}/32`,
      public_key: keys.publicKey,
      allowed_ips: params.allowed_ips,
      dns: params.dns || null,
      endpoint: params.endpoint ? endpointWithPort(params.endpoint, server.listen_port) : `${device.vpn.wan_address}:${server.listen_port}`,
      created_at: ctx.now().toISOString(),
    };
    server.peers.push(added);
    // Step 4: the VPN service reloads its configuration.
    reloadVpn(device, ctx.now());
    return { peer: added, serverPublicKey: server.public_key };
  });
  // Step 5: the answer carries the complete client configuration.
  return {
    ...peerView(peer),
    client_config: clientConfig({
      privateKey: keys.privateKey,
      address: peer.tunnel_address,
      dns: peer.dns,
      serverPublicKey,
      allowedIps: peer.allowed_ips,
      endpoint: peer.endpoint,
    }),
  };
}

export async function vpnPeerList(params: CommandParams<'vpn_peer_list'>, ctx: CommandContext) {
  const device = ctx.device.device;
  const servers = params.server_name === undefined ? device.vpn.servers : [serverNamed(device, params.server_name)];
  return { peers: servers.flatMap((s) => s.peers.map(peerView)) };
}

export async function vpnPeerDelete(params: CommandParams<'vpn_peer_delete'>, ctx: CommandContext) {
  return ctx.device.update((device) => {
    const server = device.vpn.servers.find((s) => s.peers.some((p) => p.uuid === params.uuid));
    if (!server) throw new CommandError(`no VPN peer with uuid ${params.uuid}`);
    server.peers = server.peers.filter((p) => p.uuid !== params.uuid);
    reloadVpn(device, ctx.now());
    return {};
  });
}

function reloadVpn(device: DeviceState, now: Date): void {
  device.vpn.reload_count += 1;
  device.vpn.last_reload_at = now.toISOString();
}

