// The web console's built files, and its pages' paths answered with index.html.
import { serverFeature } from '../../apps/server/server-feature.js';
import { webConsoleRoutes } from './web-console.routes.js';

export const webConsoleFeature = serverFeature({
  name: 'web-console',
  needs: [],
  setup: ({ config, logger }) => ({ rootRoutes: (app) => app.register(webConsoleRoutes, { dir: config.webConsoleDir, logger }) }),
});
