// Processes and services of agents' devices (issue 59): REST routes over the agents' proc_* and svc_*
// commands, guarded by the device-sessions feature's deviceAccess.
import { serverFeature } from '../../apps/server/server-feature.js';
import { deviceManageRoutes } from './device-manage.routes.js';
import { DeviceManageService } from './device-manage.service.js';

export const deviceManageFeature = serverFeature({
  name: 'device-manage',
  needs: ['deviceAccess', 'commander'],
  setup: ({ deviceAccess, commander }) => ({ routes: (api) => api.register(deviceManageRoutes, { manage: new DeviceManageService(deviceAccess, commander) }) }),
});
