// Server settings (agent URLs, secrets for webhooks and signing, update policy): /settings routes.
import { serverFeature } from '../../apps/server/server-feature.js';
import { settingsRoutes } from './settings.routes.js';

export const settingsFeature = serverFeature({
  name: 'settings',
  needs: ['settings'],
  setup: ({ settings }) => ({ routes: (api) => api.register(settingsRoutes, { settings }) }),
});
