// WireGuard building blocks of the reference agent: X25519 keypairs in WireGuard's encoding (raw
// 32-byte keys, standard base64), tunnel-subnet address arithmetic, and the client configuration text.
// Pure functions; the device state decides which addresses are taken.
import { generateKeyPairSync } from 'node:crypto';

export interface WireGuardKeyPair {
  privateKey: string;
  publicKey: string;
}

/** A fresh X25519 keypair; the JWK `d`/`x` fields are the raw keys in base64url. */
export function generateWireGuardKeyPair(): WireGuardKeyPair {
  const { privateKey } = generateKeyPairSync('x25519');
  const jwk = privateKey.export({ format: 'jwk' });
  if (!jwk.d || !jwk.x) throw new Error('X25519 key export returned no raw key');
  return { privateKey: base64UrlToBase64(jwk.d), publicKey: base64UrlToBase64(jwk.x) };
}

function base64UrlToBase64(value: string): string {
  return Buffer.from(value, 'base64url').toString('base64');
}

export interface Subnet {
  network: number;
  prefix: number;
}

/** Parses `10.200.0.0/24` (host bits are ignored, so `10.200.0.1/24` names the same subnet). */
export function parseSubnet(cidr: string): Subnet {
  const match = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(cidr.trim());
  if (!match?.[1] || !match[2]) throw new Error(`invalid IPv4 subnet ${cidr}`);
  const prefix = Number(match[2]);
  if (prefix > 30) throw new Error(`subnet ${cidr} has no room for peers`);
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return { network: (ipToInt(match[1]) & mask) >>> 0, prefix };
}

export function ipToInt(ip: string): number {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) throw new Error(`invalid IPv4 address ${ip}`);
  return parts.reduce((acc, p) => acc * 256 + p, 0);
}

export function intToIp(value: number): string {
  return [24, 16, 8, 0].map((shift) => (value >>> shift) & 255).join('.');
}

/** The address part of `10.200.0.2/32` or `10.200.0.2`. */
export function hostOf(address: string): string {
  return address.split('/')[0] ?? address;
}

/** The lowest host address of the subnet that is not in `taken`, or null when the subnet is full. */
export function nextFreeAddress(subnet: Subnet, taken: Iterable<string>): string | null {
  const used = new Set([...taken].map((a) => ipToInt(hostOf(a))));
  const size = 2 ** (32 - subnet.prefix);
  for (let offset = 1; offset < size - 1; offset++) {
    const candidate = subnet.network + offset;
    if (!used.has(candidate)) return intToIp(candidate);
  }
  return null;
}

/** Appends the port when the endpoint names only a host (`vpn.example.com` → `vpn.example.com:51820`). */
export function endpointWithPort(endpoint: string, port: number): string {
  const value = endpoint.trim();
  if (/^\[[^\]]+\]:\d+$/.test(value) || /^[^:]+:\d+$/.test(value)) return value;
  return value.includes(':') && !value.startsWith('[') ? `[${value}]:${port}` : `${value}:${port}`;
}

export interface ClientConfigInput {
  privateKey: string;
  address: string;
  dns: string | null;
  serverPublicKey: string;
  allowedIps: string;
  endpoint: string;
}

/** A complete wg-quick configuration for the client side of one peer. */
export function clientConfig(input: ClientConfigInput): string {
  const lines = ['[Interface]', `PrivateKey = ${input.privateKey}`, `Address = ${input.address}`];
  if (input.dns) lines.push(`DNS = ${input.dns}`);
  lines.push(
    '',
    '[Peer]',
    `PublicKey = ${input.serverPublicKey}`,
    `AllowedIPs = ${input.allowedIps}`,
    `Endpoint = ${input.endpoint}`,
    'PersistentKeepalive = 25',
  );
  return `${lines.join('\n')}\n`;
}
