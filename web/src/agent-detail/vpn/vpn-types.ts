// WireGuard peer shapes of the API (contract §8) and the server's input rules, repeated here so a typo
// in an address list is explained before the firewall is asked.
import type { ApiBody, ApiItem, ApiRequest } from '../../api/api-types';

export type VpnPeer = ApiItem<'/agents/{id}/vpn/peers'>;
/** With the client's configuration and its private key: in this answer only, the server keeps no copy. */
export type VpnPeerCreated = ApiBody<'/agents/{id}/vpn/peers', 'post'>;
export type NewPeer = ApiRequest<'/agents/{id}/vpn/peers', 'post'>;

export const DEFAULT_ALLOWED_IPS = '0.0.0.0/0';
export const DEFAULT_SERVER_NAME = 'ALWAYSON_VPN';

// eslint-disable-next-line no-control-regex
const NO_CONTROL_CHARS = /^[^\u0000-\u001f\u007f-\u009f]+$/;
const CIDR_LIST = /^[0-9A-Fa-f:.]+\/\d{1,3}(\s*,\s*[0-9A-Fa-f:.]+\/\d{1,3})*$/;
const DNS_LIST = /^[0-9A-Za-z:.-]+(\s*,\s*[0-9A-Za-z:.-]+)*$/;
const ENDPOINT = /^(\[[0-9A-Fa-f:.]+\]|[0-9A-Za-z.-]+):\d{1,5}$/;

/** The first problem with the input, in words, or null when the server will accept it. */
export function peerProblem(peer: NewPeer): string | null {
  if (!peer.name || peer.name.length > 255 || !NO_CONTROL_CHARS.test(peer.name)) return 'The name is required: up to 255 characters on one line.';
  if (peer.allowed_ips !== undefined && (peer.allowed_ips.length > 1000 || !CIDR_LIST.test(peer.allowed_ips)))
    return 'Allowed IPs are networks in CIDR form, separated by commas, e.g. 10.0.0.0/24, 192.168.1.0/24.';
  if (peer.dns !== undefined && (peer.dns.length > 255 || !DNS_LIST.test(peer.dns))) return 'DNS servers are addresses or names separated by commas, e.g. 10.0.0.1.';
  if (peer.server_name !== undefined && (peer.server_name.length > 255 || !NO_CONTROL_CHARS.test(peer.server_name)))
    return 'The VPN server name is up to 255 characters on one line.';
  if (peer.endpoint !== undefined && (peer.endpoint.length > 255 || !ENDPOINT.test(peer.endpoint)))
    return 'The endpoint is a host and port, e.g. vpn.example.net:51820 or [2001:db8::1]:51820.';
  return null;
}

export function peersPath(agentId: string, rest = ''): string {
  return `/agents/${encodeURIComponent(agentId)}/vpn/peers${rest}`;
}

/** WireGuard apps name the tunnel after the file: letters, digits and _=+.- only, at most 15 characters. */
export function confFileName(peerName: string): string {
  const base = peerName.replace(/[^A-Za-z0-9_=+.-]+/g, '_').replace(/^[._-]+/, '').slice(0, 15);
  return `${base || 'wg-client'}.conf`;
}
