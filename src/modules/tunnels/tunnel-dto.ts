// A tunnel as the API shows it (contract §8), shared by the routes and, in cluster mode, by the instance
// that holds a tunnel and answers for it to the others (see cluster/cluster-tunnels.ts).
import { z } from 'zod';
import type { Tunnel, TunnelManager } from './tunnel-manager.js';

export const tunnelSchema = z.object({
  tunnel_id: z.string(),
  agent_id: z.string(),
  proxy_host: z
    .string()
    .describe(
      'Where to connect to proxy_port. In cluster mode the ADVERTISE_ADDRESS of the server instance holding the agent\'s connection (the tunnel lives there, whichever instance was asked). ' +
        'On one server TUNNEL_BIND_ADDRESS, or, when that is a wildcard (0.0.0.0 or ::), the host name this request was sent to: the port listens on every address, and that name is the one the client already reaches the server at.',
    ),
  proxy_port: z.number().int(),
  bind_address: z.string(),
  target_host: z.string(),
  target_port: z.number().int(),
  created_at: z.string(),
  proxy_path: z.string().describe('WebSocket path carrying one session per connection, for clients that cannot reach proxy_port (see GET /proxy/{tunnel_id}); only the opener (opened_by) may use it'),
  allow_from: z
    .array(z.string())
    .describe('Client addresses and networks proxy_port lets in (from the server itself, only programs of its own account); connections from anywhere else are reset before they reach the agent'),
  opened_by: z
    .object({ type: z.enum(['user', 'api_key']), name: z.string(), key_hint: z.string().nullable() })
    .describe('Who opened the tunnel: a username, or an API key\'s name and hint (never the key)'),
  purpose: z
    .enum(['tunnel', 'desktop', 'rdp', 'web'])
    .describe('What opened it: POST /agents/{id}/tunnel, or the remote desktop, RDP and web-interface launchers (issue 60)'),
  expires_at: z.string().nullable().describe('When it closes whatever it carries (the RDP and web-interface launchers\' time limit); null: no time limit'),
  refused_connections: z
    .number()
    .int()
    .describe('Connections to proxy_port reset because their address was not in allow_from, or because another account on the server itself made them (TUNNEL_LOCAL_UIDS)'),
});

export const tunnelWithTrafficSchema = tunnelSchema.extend({
  sessions: z.number().int(),
  paused_sessions: z.number().int().describe('Sessions whose agent was asked (tunnel_pause) to stop reading the target until a slow client catches up'),
  bytes_in: z.number().int().describe('Client → target bytes'),
  bytes_out: z
    .number()
    .int()
    .describe(
      'Target → client bytes the clients took: written to the operating system for the client (TCP) or onto its WebSocket; bytes still waiting in the server are not counted. For a session the server reset, only what the client acknowledged (on Linux; elsewhere what the operating system took).',
    ),
  buffered_bytes: z
    .number()
    .int()
    .describe('Bytes the server holds right now for clients slower than their target; per session at most 8 MiB when the agent cannot pause sessions, 32 MiB otherwise'),
});

export type TunnelDto = z.infer<typeof tunnelSchema>;
export type TunnelWithTrafficDto = z.infer<typeof tunnelWithTrafficSchema>;

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

/**
 * The host clients reach a tunnel's port at: the instance's advertised address in cluster mode; on one
 * server the bind address, unless the port listens on every address, where the name the client used
 * for this request is the best guess (the proxy port listens on that host too).
 */
export function proxyHostOf(tunnel: Tunnel, advertiseAddress: string | undefined, requestHost: string): string {
  if (advertiseAddress) return advertiseAddress;
  if (!WILDCARDS.has(tunnel.bindAddress)) return tunnel.bindAddress;
  return requestHost.replace(/^\[(.*)\]$/, '$1') || tunnel.bindAddress;
}

export function tunnelDto(t: Tunnel, proxyHost: string): TunnelDto {
  return {
    tunnel_id: t.id,
    agent_id: t.agentId,
    proxy_host: proxyHost,
    proxy_port: t.port,
    bind_address: t.bindAddress,
    target_host: t.targetHost,
    target_port: t.targetPort,
    created_at: t.createdAt.toISOString(),
    proxy_path: `/api/v1/proxy/${t.id}`,
    allow_from: [...t.allowFrom.entries],
    opened_by: t.openedBy,
    purpose: t.purpose,
    expires_at: t.expiresAt?.toISOString() ?? null,
    refused_connections: t.refused,
  };
}

export function tunnelWithTrafficDto(tunnels: TunnelManager, t: Tunnel, proxyHost: string): TunnelWithTrafficDto {
  const { bytesIn, bytesOut, buffered, held } = tunnels.bytes(t);
  return { ...tunnelDto(t, proxyHost), sessions: t.sessions.size, paused_sessions: held, bytes_in: bytesIn, bytes_out: bytesOut, buffered_bytes: buffered };
}
