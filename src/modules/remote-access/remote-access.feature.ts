// Remote access to devices (issue 60): the remote desktop (VNC through noVNC, over the tunnel's proxy
// WebSocket), and the RDP and web-interface launchers. Built on the tunnels (agent-hub's TunnelManager)
// and recorded as device sessions (device-sessions feature).
import { serverFeature } from '../../apps/server/server-feature.js';
import { desktopRoutes } from './desktop.routes.js';
import { launcherRoutes } from './launchers.routes.js';
import { RemoteAccess } from './remote-access.service.js';

export const remoteAccessFeature = serverFeature({
  name: 'remote-access',
  needs: ['agents', 'tunnels', 'hub', 'settings', 'deviceSessions', 'remoteTunnels'],
  setup: ({ config, db, clock, agents, tunnels, hub, settings, deviceSessions, remoteTunnels }) => {
    const remote = new RemoteAccess(db.db, clock, agents, tunnels, settings, deviceSessions);
    return {
      async routes(api) {
        await api.register(desktopRoutes, { remote, agents, hub, cluster: remoteTunnels });
        await api.register(launcherRoutes, { remote, agents, tunnels, hub, cluster: remoteTunnels, advertiseAddress: config.cluster?.advertiseAddress });
      },
    };
  },
});
