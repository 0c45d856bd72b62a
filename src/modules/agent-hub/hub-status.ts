// GET /hub/status's content: this instance's live sockets and open tunnels, and, in cluster mode, every
// instance's (gathered over the bus; see cluster/cluster-status.ts), each entry saying where it lives.
import { z } from 'zod';
import type { TunnelManager } from '../tunnels/tunnel-manager.js';
import type { AgentHub } from './agent-hub.js';

const agentEntry = z.object({
  agent_id: z.string(),
  connected_at: z.string(),
  last_seen: z.string(),
  remote_address: z.string(),
  pending_commands: z.number().int(),
  instance_id: z.string().optional().describe('Cluster mode: the server instance holding the socket'),
});
const tunnelEntry = z.object({
  tunnel_id: z.string(),
  agent_id: z.string(),
  proxy_port: z.number().int(),
  target_host: z.string(),
  target_port: z.number().int(),
  sessions: z.number().int(),
  instance_id: z.string().optional().describe('Cluster mode: the server instance whose port this is'),
});

export const hubStatusSchema = z.object({
  agents: z.array(agentEntry),
  tunnels: z.array(tunnelEntry),
  pending_commands: z.number().int(),
  dropped_frames: z.number().int().describe('Malformed frames from agents dropped since start'),
  unknown_responses: z.number().int().describe('Answers that matched no pending command (late, or for another socket)'),
  instances: z
    .array(
      z.object({
        instance_id: z.string(),
        advertise_address: z.string(),
        started_at: z.string(),
        last_seen: z.string(),
        reachable: z.boolean().describe('False when it did not answer over the bus in time: its agents and tunnels are missing above'),
        agents: z.number().int(),
        tunnels: z.number().int(),
      }),
    )
    .optional()
    .describe('Cluster mode only: every live server instance; `agents` and `tunnels` above are the whole cluster\'s'),
});

export type HubStatusView = z.infer<typeof hubStatusSchema>;

/** This instance's part. */
export function localHubStatus(hub: AgentHub, tunnels: TunnelManager): HubStatusView {
  return {
    ...hub.status(),
    tunnels: tunnels.list().map((t) => ({
      tunnel_id: t.id,
      agent_id: t.agentId,
      proxy_port: t.port,
      target_host: t.targetHost,
      target_port: t.targetPort,
      sessions: t.sessions.size,
    })),
  };
}
