// Who may connect to a tunnel's proxy port: a short list of IPv4/IPv6 addresses and networks (CIDR),
// by default the one address the tunnel was opened from. A proxy port reaches into a customer's
// network with no credentials of its own, so this list is what stands between it and anyone who can
// route to the server (or, on 127.0.0.1, any local account).
import net from 'node:net';

export const MAX_ALLOW_FROM = 16;

const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/**
 * The address as the server should show and compare it: an IPv4-mapped IPv6 address (what a socket
 * of a server listening on `::` reports for an IPv4 client) becomes the plain IPv4 address.
 */
export function normalizeAddress(address: string): string {
  const mapped = MAPPED_V4.exec(address);
  if (mapped) return mapped[1]!;
  return net.isIPv6(address) ? new net.SocketAddress({ address, family: 'ipv6' }).address : address;
}

/**
 * One allow_from entry in its canonical form (`192.0.2.1`, `10.20.0.0/16`, `2001:db8::/32`), or null
 * when it is neither an address nor a network. Zone ids (`fe80::1%eth0`) are refused: they mean
 * nothing to the remote addresses the server sees.
 */
export function parseAllowEntry(entry: string): string | null {
  const match = /^([0-9A-Fa-f.:]+)(?:\/(\d{1,3}))?$/.exec(entry);
  if (!match) return null;
  const family = net.isIP(match[1]!);
  if (family === 0) return null;
  let address = match[1]!;
  let prefix = match[2] === undefined ? undefined : Number(match[2]);
  const mapped = MAPPED_V4.exec(address);
  if (mapped && (prefix === undefined || prefix >= 96)) {
    address = mapped[1]!;
    if (prefix !== undefined) prefix -= 96;
    return prefix === undefined ? address : `${address}/${prefix}`;
  }
  if (prefix !== undefined && prefix > (family === 4 ? 32 : 128)) return null;
  address = normalizeAddress(address);
  return prefix === undefined ? address : `${address}/${prefix}`;
}

/** The parsed list with a fast membership check (node's BlockList, which also matches IPv4-mapped forms). */
export class AllowList {
  readonly #list = new net.BlockList();

  /** `entries` must be canonical already (parseAllowEntry); anything else throws. */
  constructor(readonly entries: readonly string[]) {
    for (const entry of entries) {
      const [address, prefix] = entry.split('/') as [string, string | undefined];
      const type = net.isIPv4(address) ? 'ipv4' : 'ipv6';
      if (prefix === undefined) this.#list.addAddress(address, type);
      else this.#list.addSubnet(address, Number(prefix), type);
    }
  }

  allows(address: string | undefined): boolean {
    if (!address) return false;
    const family = net.isIP(address);
    return family !== 0 && this.#list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }
}
