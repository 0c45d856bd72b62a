// The script library and running a script on one agent (recorded in the command history).
import { serverFeature } from '../../apps/server/server-feature.js';
import { scriptRoutes } from './scripts.routes.js';
import { ScriptService } from './scripts.service.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerParts {
    scripts: ScriptService;
  }
}

export const scriptsFeature = serverFeature({
  name: 'scripts',
  needs: ['agents', 'commander', 'history'],
  setup({ db, clock, agents, commander, history }) {
    const scripts = new ScriptService(db.db, clock, { agents, commander, history });
    return { provides: { scripts }, routes: (api) => api.register(scriptRoutes, { scripts }) };
  },
});
