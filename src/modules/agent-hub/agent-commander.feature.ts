// The commander every feature sends agent commands through: the hub, or in cluster mode the cluster's
// commander that forwards to the instance holding the agent. Each answered command is announced
// (`command.answered`: Prometheus counts and times them).
import { serverFeature } from '../../apps/server/server-feature.js';
import type { ClusterCommander } from '../cluster/cluster-commander.js';
import type { AgentHub } from './agent-hub.js';
import { observeCommander, type AnsweredCommand } from './observed-commander.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerParts {
    commander: AgentHub | ClusterCommander;
  }
  interface ServerEvents {
    'command.answered': AnsweredCommand;
  }
}

export const agentCommanderFeature = serverFeature({
  name: 'agent-commander',
  needs: ['hub', 'cluster'],
  setup: ({ events, hub, cluster }) => ({
    provides: { commander: observeCommander(cluster?.commander ?? hub, (answer) => events.emit('command.answered', answer)) },
  }),
});
