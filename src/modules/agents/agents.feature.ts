// Agents as records: listing, details, customer assignment, deletion (its socket closed), and their
// connection events: /agents and /events routes.
import { serverFeature } from '../../apps/server/server-feature.js';
import { agentRoutes } from './agents.routes.js';
import { AgentService } from './agents.service.js';
import { eventRoutes } from './events.routes.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerParts {
    agents: AgentService;
  }
  interface ServerEvents {
    /** An operator changed an agent's customer or tags: what applies to it (check policies) may differ. */
    'agent.changed': { agentId: string };
  }
}

export const agentsFeature = serverFeature({
  name: 'agents',
  needs: ['commander', 'connectionBatches'],
  setup({ db, clock, events, commander, connectionBatches }) {
    const agents = new AgentService(db.db, clock, commander, connectionBatches, (agentId) => events.emit('agent.changed', { agentId }));
    return {
      provides: { agents },
      async routes(api) {
        await api.register(agentRoutes, { agents });
        await api.register(eventRoutes, { agents });
      },
    };
  },
});
