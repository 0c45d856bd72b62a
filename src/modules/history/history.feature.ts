// The history of commands sent to agents (who, what, when, the answer), written in batches, and its
// routes. Listed before the agent sockets: its stop writes what the hub's stop failed last.
import { serverFeature } from '../../apps/server/server-feature.js';
import { CommandHistory } from './command-history.js';
import { historyRoutes } from './history.routes.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerParts {
    history: CommandHistory;
  }
}

export const historyFeature = serverFeature({
  name: 'history',
  needs: ['agents'],
  setup({ db, clock, logger, agents }) {
    const history = new CommandHistory(db.db, clock, logger);
    return {
      provides: { history },
      routes: (api) => api.register(historyRoutes, { db: db.db, history, agents, clock }),
      stop: () => history.flush(),
    };
  },
});
