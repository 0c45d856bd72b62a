// Agent installers per platform (uploaded packages, and installer keys that let an installer register
// agents for one customer): /installers routes.
import { serverFeature } from '../../apps/server/server-feature.js';
import { InstallerKeyService } from './installer-keys.service.js';
import { installerRoutes } from './installer.routes.js';
import { InstallerService } from './installer.service.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerParts {
    installerKeys: InstallerKeyService;
  }
}

export const installerFeature = serverFeature({
  name: 'installer',
  needs: ['box', 'blobs', 'settings', 'apiKeys'],
  setup({ db, clock, config, box, blobs, settings, apiKeys }) {
    const installerKeys = new InstallerKeyService(db.db, box, clock);
    const installers = new InstallerService(db.db, blobs, settings, installerKeys, clock, config.firmwareMaxBytes);
    return {
      provides: { installerKeys },
      routes: (api) => api.register(installerRoutes, { installers, installerKeys, countUse: (caller) => apiKeys.countUse(caller) }),
    };
  },
});
