// The admin API (users, their lights and phone extensions) behind CALLSTATUS_ADMIN_TOKEN.
import { adminRoutes } from './admin.routes.js';
import { callstatusFeature } from './callstatus-feature.js';

export const adminFeature = callstatusFeature({
  name: 'admin',
  needs: [],
  setup: ({ db, deps }) => ({ routes: (api) => api.register(adminRoutes, { db: db.db, adminToken: deps.adminToken }) }),
});
