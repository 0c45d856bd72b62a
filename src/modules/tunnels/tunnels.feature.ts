// Tunnels into a customer's network through an agent: opening and closing them, and the WebSocket
// relay (/proxy/{tunnel_id}). The tunnel manager itself lives with the hub (agent-hub.feature.ts).
import { serverFeature } from '../../apps/server/server-feature.js';
import { tunnelProxyRoutes } from './tunnel-proxy.ws.js';
import { tunnelRoutes } from './tunnels.routes.js';

export const tunnelsFeature = serverFeature({
  name: 'tunnels',
  needs: ['tunnels', 'agents', 'remoteTunnels'],
  setup: ({ config, logger, tunnels, agents, remoteTunnels }) => ({
    async routes(api) {
      await api.register(tunnelRoutes, { tunnels, agents, remote: remoteTunnels, advertiseAddress: config.cluster?.advertiseAddress });
      await api.register(tunnelProxyRoutes, { tunnels, agents, logger, remote: remoteTunnels });
    },
  }),
});
