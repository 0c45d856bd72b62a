// Single sign-on with OpenID Connect (issue 35, Build 2): providers managed by admins, the public
// sign-in flow, and the switch that turns password sign-in off for everyone but admins (a password
// sign-in rule of auth).
import { serverFeature } from '../../apps/server/server-feature.js';
import { OidcClients } from './oidc-clients.js';
import { SsoLoginService } from './sso-login.service.js';
import { ssoLoginRoutes } from './sso-login.routes.js';
import { SsoProviderService } from './sso-providers.service.js';
import { ssoRoutes } from './sso.routes.js';

export const ssoFeature = serverFeature({
  name: 'sso',
  needs: ['box', 'users', 'auth'],
  setup({ db, clock, logger, config, box, users, auth }) {
    const clients = new OidcClients(clock);
    const providers = new SsoProviderService(db.db, box, clients, clock);
    const logins = new SsoLoginService(db.db, providers, clients, users, auth, clock, logger);
    auth.addPasswordSignInRule((user) => providers.passwordSignInAllowed(user));
    return {
      async routes(api) {
        await api.register(ssoLoginRoutes, { logins, publicUrl: config.publicUrl, logger });
        await api.register(ssoRoutes, { providers, publicUrl: config.publicUrl });
      },
    };
  },
});
