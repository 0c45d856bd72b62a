// WireGuard peers on firewalls, through agent commands: /agents/{id}/vpn routes.
import { serverFeature } from '../../apps/server/server-feature.js';
import { vpnRoutes } from './vpn.routes.js';
import { VpnService } from './vpn.service.js';

export const vpnFeature = serverFeature({
  name: 'vpn',
  needs: ['agents', 'commander'],
  setup: ({ agents, commander }) => ({ routes: (api) => api.register(vpnRoutes, { vpn: new VpnService(agents, commander) }) }),
});
