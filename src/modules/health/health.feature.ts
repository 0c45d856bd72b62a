// Liveness and readiness (/healthz, /readyz) for load balancers and orchestrators.
import { serverFeature } from '../../apps/server/server-feature.js';
import { healthRoutes } from './health.routes.js';
import { HealthService } from './health.service.js';

export const healthFeature = serverFeature({
  name: 'health',
  needs: [],
  setup: ({ db }) => ({ rootRoutes: (app) => app.register(healthRoutes, { health: new HealthService(db.db, db.dialect) }) }),
});
