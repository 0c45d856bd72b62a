// WireGuard peers on an agent's firewall (contract §8): the REST shapes, and the agent's answers, which
// are checked like any input. Peers live only on the firewall; the server stores none of them.
import { z } from 'zod';
import { agentIdSchema } from '../agents/agents.schemas.js';

export const DEFAULT_ALLOWED_IPS = '0.0.0.0/0';
export const DEFAULT_SERVER_NAME = 'ALWAYSON_VPN';

// The values end up in a WireGuard configuration file on the firewall and in the client's; line breaks
// or other control characters there could add settings, so they are refused here already.
const text = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .regex(/^[^\p{Cc}]*$/u, 'must not contain control characters');
const serverName = text(255).describe(`Name of the VPN server instance on the firewall; default ${DEFAULT_SERVER_NAME}`);

export const peerParams = z.object({ id: agentIdSchema, uuid: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, - or _') });

export const createPeerBody = z.object({
  name: text(255).describe('Peer name'),
  allowed_ips: z
    .string()
    .trim()
    .max(1000)
    .regex(/^[0-9A-Fa-f:.]+\/\d{1,3}(\s*,\s*[0-9A-Fa-f:.]+\/\d{1,3})*$/, 'must be a comma-separated list of CIDR networks')
    .default(DEFAULT_ALLOWED_IPS)
    .describe(`Networks the client routes through the tunnel (comma-separated CIDRs); default ${DEFAULT_ALLOWED_IPS}`),
  dns: z
    .string()
    .trim()
    .max(255)
    .regex(/^[0-9A-Za-z:.-]+(\s*,\s*[0-9A-Za-z:.-]+)*$/, 'must be a comma-separated list of addresses or host names')
    .optional()
    .describe('DNS server(s) for the client configuration; none by default'),
  server_name: serverName.default(DEFAULT_SERVER_NAME),
  endpoint: z
    .string()
    .trim()
    .max(255)
    .regex(/^(\[[0-9A-Fa-f:.]+\]|[0-9A-Za-z.-]+):\d{1,5}$/, 'must be host:port or [IPv6]:port')
    .optional()
    .describe("Public address and port for the client; default: the agent's public address of the default-route interface and the server's port"),
});
export type CreatePeerInput = z.infer<typeof createPeerBody>;

export const listPeersQuery = z.object({ server_name: text(255).optional().describe('Only the peers of this server instance') });

export const peerSchema = z
  .object({
    uuid: z.string(),
    name: z.string(),
    server_name: z.string(),
    tunnel_address: z.string().describe('The address assigned in the tunnel subnet (next free one)'),
    public_key: z.string().describe("The peer's public key (its key pair is generated on the firewall)"),
    allowed_ips: z.string(),
    dns: z.string().nullable(),
    endpoint: z.string().nullable(),
  })
  .meta({ id: 'VpnPeer' });
export type Peer = z.infer<typeof peerSchema>;

export const createdPeerSchema = peerSchema
  .extend({
    client_config: z.string().describe("WireGuard configuration for the client, with the peer's private key. Shown only in this response: the server keeps no copy"),
  })
  .meta({ id: 'VpnPeerCreated' });
export type CreatedPeer = z.infer<typeof createdPeerSchema>;

export const deletedSchema = z.object({ deleted: z.literal(true) });

/**
 * A peer as the agent describes it. Unknown fields are dropped (whatever the agent adds, such as a
 * private key, never reaches a response); a missing `dns` or `endpoint` becomes null.
 */
const agentPeer = z.object({
  uuid: z.string().min(1).max(64),
  name: z.string().max(255),
  server_name: z.string().max(255),
  tunnel_address: z.string().max(255),
  public_key: z.string().max(255),
  allowed_ips: z.string().max(1000),
  dns: z.string().max(255).nullish().transform((v) => v ?? null),
  endpoint: z.string().max(255).nullish().transform((v) => v ?? null),
});

export const agentPeerAddAnswer = agentPeer.extend({ client_config: z.string().min(1).max(65_536) });
export const agentPeerListAnswer = z.object({ peers: z.array(agentPeer) });
