// The script library and running a script on one agent (recorded in the command history).
import { serverFeature } from '../../apps/server/server-feature.js';
import { scriptRoutes } from './scripts.routes.js';
import { ScriptService } from './scripts.service.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerParts {
    scripts: ScriptService;
  }
  interface ServerEvents {
    /** A library script was changed or deleted (check sets carry scripts: issue 61). */
    'script.changed': { scriptId: number };
  }
}

export const scriptsFeature = serverFeature({
  name: 'scripts',
  needs: ['agents', 'commander', 'history'],
  setup({ db, clock, events, agents, commander, history }) {
    const changed = (scriptId: number) => events.emit('script.changed', { scriptId });
    const scripts = new ScriptService(db.db, clock, { agents, commander, history, changed });
    return { provides: { scripts }, routes: (api) => api.register(scriptRoutes, { scripts }) };
  },
});
