// Bulk actions: a command or script for many agents, run by the bulk runner, which waits for agents
// that are away; an agent that connects here wakes it at once.
import os from 'node:os';
import { serverFeature } from '../../apps/server/server-feature.js';
import { BulkRunner } from './bulk-runner.js';
import { bulkRoutes } from './bulk.routes.js';
import { BulkService } from './bulk.service.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerParts {
    bulk: BulkService;
  }
}

export const bulkFeature = serverFeature({
  name: 'bulk',
  needs: ['agents', 'commander', 'scripts', 'history'],
  setup({ db, clock, logger, config, events, agents, commander, scripts, history }) {
    const instanceId = config.cluster?.instanceId ?? `${os.hostname()}:${process.pid}`;
    const runner = new BulkRunner(db.db, clock, logger, instanceId, { commander, history, scripts });
    const bulk = new BulkService(db.db, clock, agents, commander, scripts, () => runner.wake());
    // A bulk action may be waiting for this agent: look at once instead of at the runner's next pass.
    events.on('agent.connected', ({ agentId }) => runner.agentConnected(agentId));
    return {
      provides: { bulk },
      routes: (api) => api.register(bulkRoutes, { bulk }),
      start: () => runner.start(),
      stop: () => runner.stop(),
    };
  },
});
