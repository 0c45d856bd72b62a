// Who may call a route is declared on the route itself (`config: { access }`) and never derived from its
// URL. This plugin records every route and refuses to start an app in which any route lacks a
// declaration, so nothing becomes reachable by accident. http/auth.ts enforces the declarations.
import type { FastifyInstance, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';

import type { RouteAccess } from '../modules/auth/access-policy.js';

export type { RouteAccess } from '../modules/auth/access-policy.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
    /** Server-wide (users, settings, the script library): 403 for callers limited to customers. */
    serverWide?: boolean;
    /** Audit action name for non-GET requests; `false` for machine traffic that is not audited. */
    audit?: string | false;
  }
  interface FastifyInstance {
    /** Every route of the app as registered, with its access declaration (read after ready). */
    readonly declaredRoutes: ReadonlyArray<DeclaredRoute>;
  }
}

export interface DeclaredRoute {
  readonly method: string;
  readonly url: string;
  readonly access: RouteAccess | undefined;
  readonly hidden: boolean;
}

export const routeAccessPlugin = fp(
  async (app: FastifyInstance) => {
    // Keep the options objects themselves: plugins registered deeper may still set `config.access`
    // in their own onRoute hooks after ours has run.
    const routes: RouteOptions[] = [];
    app.addHook('onRoute', (route) => {
      routes.push(route);
    });
    app.decorate('declaredRoutes', {
      getter: () =>
        routes.flatMap((r) =>
          [r.method].flat().map((method) => ({
            method,
            url: r.url,
            access: r.config?.access,
            hidden: Boolean((r.schema as { hide?: boolean } | undefined)?.hide),
          })),
        ),
    });
    app.addHook('onReady', async () => {
      const undeclared = app.declaredRoutes.filter((r) => r.access === undefined);
      if (undeclared.length > 0) {
        const list = undeclared.map((r) => `${r.method} ${r.url}`).join(', ');
        throw new Error(`routes without an access declaration (config.access): ${list}`);
      }
    });
  },
  { name: 'route-access' },
);

/** For plugins whose routes we do not write (the docs UI): declares every route registered inside. */
export function declareAccessForPluginRoutes(app: FastifyInstance, access: RouteAccess): void {
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, access };
  });
}
