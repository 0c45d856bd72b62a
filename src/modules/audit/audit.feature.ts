// The audit log (written by the recorder and by features; read through /audit).
import { serverFeature } from '../../apps/server/server-feature.js';
import { auditRoutes } from './audit.routes.js';

export const auditFeature = serverFeature({
  name: 'audit',
  needs: ['audit'],
  setup: ({ audit }) => ({ routes: (api) => api.register(auditRoutes, { audit }) }),
});
