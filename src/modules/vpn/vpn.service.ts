// VPN peers (contract §8) are kept on the agent's firewall: each operation is one command over the
// agent's WebSocket, and its answer is checked before anything of it is returned. Access is the agent's
// (404 outside the caller's scope). The client configuration carries the peer's private key: it is
// passed through to the one response and never stored or logged.
import type { z } from 'zod';
import { AppError } from '../../platform/errors.js';
import type { AgentCommander } from '../agent-hub/agent-commander.js';
import type { AgentService } from '../agents/agents.service.js';
import type { Caller } from '../auth/caller.js';
import { agentPeerAddAnswer, agentPeerListAnswer, type CreatedPeer, type CreatePeerInput, type Peer } from './vpn.schemas.js';

/** Creating a peer reloads the firewall's VPN service; every VPN command may take this long. */
export const VPN_TIMEOUT_MS = 60_000;

export class VpnService {
  constructor(
    private readonly agents: AgentService,
    private readonly commander: AgentCommander,
  ) {}

  async create(caller: Caller, agentId: string, input: CreatePeerInput): Promise<CreatedPeer> {
    await this.agents.get(caller, agentId);
    const params = {
      name: input.name,
      server_name: input.server_name,
      allowed_ips: input.allowed_ips,
      ...(input.dns !== undefined ? { dns: input.dns } : {}),
      ...(input.endpoint !== undefined ? { endpoint: input.endpoint } : {}),
    };
    const answer = await this.commander.request(agentId, 'vpn_peer_add', params, VPN_TIMEOUT_MS);
    return parseAnswer(agentPeerAddAnswer, answer, 'agent sent a malformed VPN peer');
  }

  async list(caller: Caller, agentId: string, serverName: string | undefined): Promise<Peer[]> {
    await this.agents.get(caller, agentId);
    const answer = await this.commander.request(agentId, 'vpn_peer_list', serverName !== undefined ? { server_name: serverName } : {}, VPN_TIMEOUT_MS);
    const { peers } = parseAnswer(agentPeerListAnswer, answer, 'agent sent a malformed VPN peer list');
    // An agent that ignores the filter still gives the caller only what was asked for.
    return serverName === undefined ? peers : peers.filter((p) => p.server_name === serverName);
  }

  /** The agent answers with an error (502) when it has no such peer. */
  async delete(caller: Caller, agentId: string, uuid: string): Promise<void> {
    await this.agents.get(caller, agentId);
    await this.commander.request(agentId, 'vpn_peer_delete', { uuid }, VPN_TIMEOUT_MS);
  }
}

/** The message is fixed: the answer may hold a private key, so none of it goes into the error or a log. */
function parseAnswer<T extends z.ZodType>(schema: T, answer: unknown, message: string): z.output<T> {
  const parsed = schema.safeParse(answer);
  if (!parsed.success) throw new AppError('AGENT_ERROR', message);
  return parsed.data;
}
