// Hands on the device (issue 59): a shell on the agent's device, its files, processes and services,
// every session audited and the shells recorded. The streams ride on the hub's device streams
// (agent-hub/device-streams.ts). This feature keeps what agents announce they can do and provides the
// guard and the session log that the shell, files, processes and services routes share.
import { serverFeature } from '../../apps/server/server-feature.js';
import { storeCapabilities } from './capabilities.repo.js';
import { DeviceAccess } from './device-access.js';
import { DeviceSessionLog } from './session-log.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerParts {
    /** Who may put hands on which device (scope, role, API keys' setting, capability, connection). */
    deviceAccess: DeviceAccess;
    /** Rows and audit entries of device shells and file transfers. */
    deviceSessions: DeviceSessionLog;
  }
}

export const deviceSessionsFeature = serverFeature({
  name: 'device-sessions',
  needs: ['agents', 'commander', 'settings', 'audit'],
  setup({ db, clock, logger, events, agents, commander, settings, audit }) {
    events.on('agent.capabilities', ({ agentId, capabilities }) =>
      storeCapabilities(db.db, agentId, capabilities).catch((err: unknown) => logger.warn({ err, agentId }, "could not store an agent's capabilities")),
    );
    return {
      provides: {
        deviceAccess: new DeviceAccess(agents, commander, settings),
        deviceSessions: new DeviceSessionLog(db.db, audit, clock, logger),
      },
    };
  },
});
