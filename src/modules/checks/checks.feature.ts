// Checks and policies (issue 61): agents run checks that policies assign them (service, process, network,
// thresholds and Nagios-convention scripts) and report their states and perfdata. This feature brings
// each agent held here its effective set (check-sets.ts), stores what agents report (check-results.ts)
// and offers the policies, an agent's checks and the fleet's failing checks over the API. A change of
// state is announced as `check.state-changed`.
import { serverFeature } from '../../apps/server/server-feature.js';
import { PeriodicJob } from '../../platform/periodic-job.js';
import { CheckResults, type StateChange } from './check-results.js';
import { CheckSets } from './check-sets.js';
import { checkHistoryRetentionJob } from './history-retention.js';
import { checkRoutes } from './checks.routes.js';
import { CheckService } from './checks.service.js';
import { bumpRevision, policiesUseScript } from './policies.repo.js';
import { policyRoutes } from './policies.routes.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerParts {
    checkSets: CheckSets;
    checkResults: CheckResults;
  }
  interface ServerEvents {
    /** A check on an agent reported a state other than its last (or its first result). */
    'check.state-changed': StateChange;
  }
}

/** How often each instance looks whether policies or overrides changed elsewhere in the cluster. */
const REVISION_POLL_MS = 5000;

export const checksFeature = serverFeature({
  name: 'checks',
  needs: ['agents', 'hub', 'metricLayouts'],
  setup({ db, clock, logger, config, events, leaderWork, agents, hub, metricLayouts }) {
    const sets = new CheckSets(db.db, hub, logger, clock);
    const results = new CheckResults(db.db, sets, metricLayouts, logger, (change) => events.emit('check.state-changed', change));
    const service = new CheckService(db.db, clock, agents, sets);
    events.on('agent.capabilities', ({ agentId, capabilities }) => sets.connected(agentId, capabilities));
    events.on('agent.presence', ({ agentId, holding }) => {
      if (!holding) sets.disconnected(agentId);
    });
    events.on('agent.check-results', ({ agentId, frame }) => results.receive(agentId, frame));
    // Held here: its set now; elsewhere: the revision tells the instance that holds it.
    events.on('agent.changed', async ({ agentId }) => {
      if (!sets.agentChanged(agentId)) await bumpRevision(db.db);
    });
    // A check set carries the text of the library scripts it runs: a changed script is a new set.
    events.on('script.changed', async ({ scriptId }) => {
      if (await policiesUseScript(db.db, scriptId)) {
        await bumpRevision(db.db);
        sets.pollSoon();
      }
    });
    leaderWork.add(checkHistoryRetentionJob(db.db, config.metricsRetentionDays, clock, logger));
    const revisionPoll = new PeriodicJob('checks revision poll', clock, REVISION_POLL_MS, logger, () => sets.poll());
    return {
      provides: { checkSets: sets, checkResults: results },
      async routes(api) {
        await api.register(policyRoutes, { checks: service });
        await api.register(checkRoutes, {
          checks: service,
          status: () => ({ received_results: results.counts.received, ignored_results: results.counts.ignored, agents_with_sets: sets.holding(), agents_retrying_sets: sets.failing() }),
        });
      },
      start: () => revisionPoll.start(),
      async stop() {
        await revisionPoll.stop();
        await sets.stop();
        await results.flush();
      },
    };
  },
});
