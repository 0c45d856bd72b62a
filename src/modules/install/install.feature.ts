// Install commands and scripts a technician pastes on a device (what the installer downloads and runs).
import { serverFeature } from '../../apps/server/server-feature.js';
import { installRoutes } from './install.routes.js';
import { InstallService } from './install.service.js';

export const installFeature = serverFeature({
  name: 'install',
  needs: ['apiKeys', 'agents', 'firmware', 'installerKeys', 'settings'],
  setup: ({ db, clock, apiKeys, agents, firmware, installerKeys, settings }) => ({
    routes: (api) => api.register(installRoutes, { install: new InstallService({ db: db.db, apiKeys, agents, firmware, installerKeys, settings, clock }) }),
  }),
});
