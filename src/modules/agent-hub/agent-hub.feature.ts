// The agent hub: the live sockets of this instance's agents, commands to them, and the tunnels that
// ride on those sockets. Connection events are written in batches; a connected agent and a change in
// which agents this instance holds are announced (bulk actions and cluster presence listen).
import { serverFeature } from '../../apps/server/server-feature.js';
import { ConnectionBatches } from '../agents/connection-batches.js';
import { TunnelManager } from '../tunnels/tunnel-manager.js';
import { AgentHub } from './agent-hub.js';
import type { CheckResultsFrame } from '../checks/check-protocol.js';
import type { DeviceCapability } from './device-protocol.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerParts {
    hub: AgentHub;
    tunnels: TunnelManager;
    /** The database work of agent sockets (connection events, owner lookups), batched. */
    connectionBatches: ConnectionBatches;
  }
  interface ServerEvents {
    /** An agent's socket opened here and its `connected` event is written (or failed to be). */
    'agent.connected': { agentId: string; at: Date };
    /** This instance started (`holding`) or stopped holding an agent's socket; `recorded` settles once its `disconnected` event is written. */
    'agent.presence': { agentId: string; holding: boolean; recorded?: Promise<void> };
    /** An agent's socket announced what it can do beyond the spec's commands (its hello frame). */
    'agent.capabilities': { agentId: string; capabilities: DeviceCapability[] };
    /** An agent connected here sent results of its checks (issue 61). */
    'agent.check-results': { agentId: string; frame: CheckResultsFrame };
  }
}

export const agentHubFeature = serverFeature({
  name: 'agent-hub',
  needs: [],
  setup({ db, clock, logger, config, events }) {
    const connectionBatches = new ConnectionBatches(db.db, db.dialect);
    const hub = new AgentHub(clock, logger, {
      recordEvent: (agentId, type, at) =>
        connectionBatches.record({ agent_id: agentId, type, created_at: at }).finally(() => {
          if (type === 'connected') events.emit('agent.connected', { agentId, at });
        }),
      onPresence: (agentId, holding, recorded) => events.emit('agent.presence', { agentId, holding, recorded }),
      onCapabilities: (agentId, capabilities) => events.emit('agent.capabilities', { agentId, capabilities }),
      onCheckResults: (agentId, frame) => events.emit('agent.check-results', { agentId, frame }),
    });
    const tunnels = new TunnelManager(hub, clock, logger, config.tunnels);
    return { provides: { hub, tunnels, connectionBatches } };
  },
});
