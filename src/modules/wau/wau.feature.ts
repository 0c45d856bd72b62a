// Windows update rules (WAU lists per customer) and the software inventory agents report.
import { serverFeature } from '../../apps/server/server-feature.js';
import { SoftwareInventory } from './software-inventory.js';
import { wauRoutes } from './wau.routes.js';
import { WauService } from './wau.service.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerParts {
    softwareInventory: SoftwareInventory;
  }
}

export const wauFeature = serverFeature({
  name: 'wau',
  needs: [],
  setup: ({ db, clock }) => ({
    provides: { softwareInventory: new SoftwareInventory(db.db, clock) },
    routes: (api) => api.register(wauRoutes, { wau: new WauService(db.db, clock) }),
  }),
});
