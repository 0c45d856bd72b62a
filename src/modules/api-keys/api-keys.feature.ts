// API keys (read, write, admin, agent; optionally scoped to a customer): /keys routes.
import { serverFeature } from '../../apps/server/server-feature.js';
import { apiKeyRoutes } from './api-keys.routes.js';

export const apiKeysFeature = serverFeature({
  name: 'api-keys',
  needs: ['apiKeys'],
  setup: ({ apiKeys }) => ({ routes: (api) => api.register(apiKeyRoutes, { apiKeys }) }),
});
