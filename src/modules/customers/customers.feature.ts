// Customers (the MSP's clients) and the agents and keys scoped to them: /customers routes.
import { serverFeature } from '../../apps/server/server-feature.js';
import { customerRoutes } from './customers.routes.js';

export const customersFeature = serverFeature({
  name: 'customers',
  needs: ['customers', 'apiKeys'],
  setup: ({ customers, apiKeys }) => ({ routes: (api) => api.register(customerRoutes, { customers, apiKeys }) }),
});
