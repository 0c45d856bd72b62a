// Tunnel shapes of the API (contract §8) and how the console tells a technician to reach one: the
// proxy port directly where it is reachable (from the tunnel's allow_from addresses only), otherwise the
// CLI's `tunnel connect` over the WebSocket, signed in as whoever opened the tunnel.
import type { ApiBody, ApiItem } from '../../api/api-types';

export type OpenedTunnel = ApiBody<'/agents/{id}/tunnel', 'post'>;
export type Tunnel = ApiItem<'/agents/{id}/tunnels'>;

/** What a tunnel is for (issue 60): opened here, or by the remote desktop, RDP or web-interface launchers. */
export const PURPOSE_LABELS: Readonly<Record<Tunnel['purpose'], string>> = {
  tunnel: 'Tunnel',
  desktop: 'Remote desktop (in a browser)',
  rdp: 'RDP',
  web: 'Web interface',
};

/** Same rule as the server's (POST /agents/{id}/tunnel). */
export const TARGET_HOST = /^[A-Za-z0-9.:_-]{1,253}$/;

/** The server allows at most this many allow_from entries. */
export const MAX_ALLOW_FROM = 16;

/**
 * "10.0.0.5, 192.168.1.0/24" → the list; empty → undefined (the server then allows the address the
 * request comes from). Each entry is checked by the server, which names a bad one.
 */
export function parseAllowFrom(text: string): string[] | undefined {
  const entries = text
    .split(/[\s,]+/)
    .map((entry) => entry.trim())
    .filter(Boolean);
  return entries.length > 0 ? entries : undefined;
}

/** "you", "user anna" or "API key ci (rmm_abcd…wxyz)". */
export function openerText(openedBy: OpenedTunnel['opened_by'], username: string | undefined): string {
  if (openedBy.type === 'user') return openedBy.name === username ? `you (${openedBy.name})` : `user ${openedBy.name}`;
  return `API key ${openedBy.name} (${openedBy.key_hint ?? ''})`;
}

export function tunnelsPath(agentId: string, rest: string): string {
  return `/agents/${encodeURIComponent(agentId)}${rest}`;
}

/** "host:port", with brackets around an IPv6 host so the port stays readable. */
export function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * Where the proxy port can be reached directly (the server's `proxy_host`: in a cluster, the instance
 * holding the tunnel), or null when it listens on the server's loopback only.
 */
export function directAddress(tunnel: Tunnel): string | null {
  if (LOOPBACK.has(tunnel.bind_address)) return null;
  return hostPort(tunnel.proxy_host, tunnel.proxy_port);
}

/** A local port that is easy to remember: the target's plus 10000 (5900 → 15900, as in the README). */
export function suggestedListen(targetPort: number): string {
  const port = targetPort + 10_000 <= 65_535 ? targetPort + 10_000 : targetPort;
  return `127.0.0.1:${port}`;
}

/** Shell-quotes a value unless it is made only of characters no shell treats specially. */
function shellWord(value: string): string {
  return /^[A-Za-z0-9_:/.@%+=,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * The README's command for this tunnel. Only its opener may use the tunnel's WebSocket, so a tunnel
 * opened by a user signs in with that user's token (RMM_TOKEN), one opened by a key with that key; the
 * credential stays a placeholder unless `token` is given.
 */
export function connectCommand(origin: string, tunnel: Pick<Tunnel, 'tunnel_id' | 'target_port' | 'opened_by'>, token?: string): string {
  const credential = tunnel.opened_by.type === 'user' ? `RMM_TOKEN=${token ? shellWord(token) : '...'}` : 'RMM_API_KEY=...';
  return `${credential} npm run cli -- tunnel connect --server ${shellWord(origin)} --tunnel ${shellWord(tunnel.tunnel_id)} --listen ${suggestedListen(tunnel.target_port)}`;
}
