// Users of the console: accounts, roles and customer scope, TOTP, and /users routes.
import { serverFeature } from '../../apps/server/server-feature.js';
import { userRoutes } from './users.routes.js';

export const usersFeature = serverFeature({
  name: 'users',
  needs: ['users', 'auth'],
  setup: ({ users, auth }) => ({ routes: (api) => api.register(userRoutes, { users, auth }) }),
});
