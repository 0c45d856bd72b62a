// Configuration backups of firewalls (config.xml through the agent), their versions and diffs.
import { serverFeature } from '../../apps/server/server-feature.js';
import { backupRoutes } from './backups.routes.js';
import { BackupService } from './backups.service.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerParts {
    backups: BackupService;
  }
}

export const backupsFeature = serverFeature({
  name: 'backups',
  needs: ['agents', 'commander'],
  setup({ db, clock, agents, commander }) {
    const backups = new BackupService(db.db, agents, commander, clock);
    return { provides: { backups }, routes: (api) => api.register(backupRoutes, { backups }) };
  },
});
