// Files on the device (issue 59): browse, download and upload (streamed through the agent's socket),
// make directories, rename and delete, through the agent's fs_* commands. Access is the device guard's
// (device-sessions); transfers are device sessions, changes are audited. Documented in docs/device-files.md.
import { serverFeature } from '../../apps/server/server-feature.js';
import { deviceFilesRoutes } from './device-files.routes.js';
import { fileTransferRoutes } from './file-transfer.routes.js';

export const deviceFilesFeature = serverFeature({
  name: 'device-files',
  needs: ['deviceAccess', 'deviceSessions', 'commander', 'hub', 'settings', 'remoteTunnels'],
  setup: ({ deviceAccess, deviceSessions, commander, hub, settings, remoteTunnels }) => ({
    async routes(api) {
      await api.register(deviceFilesRoutes, { deviceAccess, commander });
      await api.register(fileTransferRoutes, { deviceAccess, deviceSessions, commander, hub, settings, remote: remoteTunnels });
    },
  }),
});
