// The device shell (issue 59): a shell on an agent's device for the console, over a WebSocket relayed
// through the agent's socket, every session recorded as an asciicast (unless the setting is off) and
// kept for the retention period; the list of device sessions and, for admins, their recordings.
import { serverFeature } from '../../apps/server/server-feature.js';
import { deviceShellRoutes } from './device-shell.routes.js';
import { DeviceShells } from './device-shells.js';
import { recordingRetentionJob } from './recording-retention.js';
import { recordingRoutes } from './recordings.routes.js';

export const deviceShellFeature = serverFeature({
  name: 'device-shell',
  needs: ['hub', 'remoteTunnels', 'deviceAccess', 'deviceSessions', 'settings', 'blobs', 'audit'],
  setup({ db, clock, logger, config, leaderWork, hub, remoteTunnels, deviceAccess, deviceSessions, settings, blobs, audit }) {
    const shells = new DeviceShells(hub, deviceSessions, settings, blobs, clock, logger, config.dataDir);
    leaderWork.add(recordingRetentionJob(db.db, blobs, settings, clock, logger));
    return {
      async routes(api) {
        await api.register(deviceShellRoutes, { shells, deviceAccess, hub, remote: remoteTunnels, allowedOrigins: config.allowedOrigins });
        await api.register(recordingRoutes, { db: db.db, blobs, audit });
      },
      start: () => shells.start(),
      stop: () => shells.stop(),
    };
  },
});
