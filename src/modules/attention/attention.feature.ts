// What needs a technician's attention across the fleet (the console's overview): /attention routes.
import { serverFeature } from '../../apps/server/server-feature.js';
import { attentionRoutes } from './attention.routes.js';
import { AttentionService } from './attention.service.js';

export const attentionFeature = serverFeature({
  name: 'attention',
  needs: [],
  setup: ({ db, clock }) => ({ routes: (api) => api.register(attentionRoutes, { attention: new AttentionService(db.db, clock) }) }),
});
