// The agents' side of the hub: their WebSocket endpoint, the command routes (exec, reboot, hub
// status), and the life of the hub and its tunnels. Listed after the cluster and the history, so on
// close the sockets are closed (their disconnects written, pending commands failed) before the history
// writes its last entries and before this instance leaves the cluster.
import { serverFeature } from '../../apps/server/server-feature.js';
import { agentSocketRoutes } from './agent-hub.ws.js';
import { commandRoutes } from './commands.routes.js';
import { ConnectRate } from './connect-rate.js';

export const agentSocketsFeature = serverFeature({
  name: 'agent-sockets',
  needs: ['hub', 'tunnels', 'agents', 'commander', 'history', 'hubStatus'],
  setup: ({ clock, hub, tunnels, agents, commander, history, hubStatus }) => ({
    async routes(api) {
      await api.register(agentSocketRoutes, { hub, agents, connectRate: new ConnectRate(clock) });
      await api.register(commandRoutes, { commander, history, agents, status: hubStatus });
    },
    start() {
      hub.start();
      tunnels.start();
    },
    async stop() {
      await tunnels.stop();
      await hub.stop();
    },
  }),
});
