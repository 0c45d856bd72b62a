// Single sign-on with OpenID Connect (issue 35, Build 2): providers managed by admins, the public
// sign-in flow, and the switch that turns password sign-in off for everyone but admins (wired into the
// password login through AuthService.passwordSignInAllowed).
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { AuthService } from '../auth/auth.service.js';
import type { UserService } from '../users/users.service.js';
import { OidcClients } from './oidc-clients.js';
import { SsoLoginService } from './sso-login.service.js';
import { ssoLoginRoutes } from './sso-login.routes.js';
import { SsoProviderService } from './sso-providers.service.js';
import { ssoRoutes } from './sso.routes.js';

export interface SsoDeps {
  db: Kysely<Database>;
  box: SecretBox;
  clock: Clock;
  logger: Logger;
  users: UserService;
  auth: AuthService;
  publicUrl: string | undefined;
}

export function createSsoFeature(deps: SsoDeps) {
  const clients = new OidcClients(deps.clock);
  const providers = new SsoProviderService(deps.db, deps.box, clients, deps.clock);
  const logins = new SsoLoginService(deps.db, providers, clients, deps.users, deps.auth, deps.clock, deps.logger);
  deps.auth.passwordSignInAllowed = (user) => providers.passwordSignInAllowed(user);
  return {
    providers,
    logins,
    /** Registers the routes (under the API prefix). */
    async routes(api: FastifyInstance): Promise<void> {
      await api.register(ssoLoginRoutes, { logins, publicUrl: deps.publicUrl, logger: deps.logger });
      await api.register(ssoRoutes, { providers, publicUrl: deps.publicUrl });
    },
  };
}
