// Sign-in and who is calling: JWT access tokens, the authentication hook every route relies on (API
// keys, tokens, the key throttle), the audit recorder for changing requests, and /auth routes.
import { API_PREFIX, serverFeature } from '../../apps/server/server-feature.js';
import { auditRecorderPlugin } from '../../http/audit-recorder.js';
import { authPlugin, registerJwt } from '../../http/auth.js';
import { ApiKeyThrottle } from './attempt-throttle.js';
import { authRoutes } from './auth.routes.js';
import { AuthService } from './auth.service.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerParts {
    auth: AuthService;
  }
}

export const authFeature = serverFeature({
  name: 'auth',
  needs: ['apiKeys', 'audit', 'passwords', 'box'],
  async setup({ app, db, deps, clock, apiKeys, audit, passwords, box }) {
    const tokens = await registerJwt(app, deps.secrets.jwtSecret, clock);
    const auth = new AuthService(db.db, passwords, tokens, box, clock);
    await app.register(authPlugin, {
      apiKey: (key) => apiKeys.authenticate(key),
      accessToken: (token) => auth.authenticateAccessToken(token),
      keyThrottle: new ApiKeyThrottle(clock),
      audit,
    });
    await app.register(auditRecorderPlugin, { audit, prefix: API_PREFIX });
    return {
      provides: { auth },
      routes: (api) => api.register(authRoutes, { auth }),
    };
  },
});
