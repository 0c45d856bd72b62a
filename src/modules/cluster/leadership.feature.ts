// Starts the work that runs once per installation (leader work: the status monitor, the task
// scheduler, metrics maintenance, alerting) when everything else is running: at once on a single
// server, or by joining the cluster, whose leader runs it. Listed last, it stops that work first.
import { serverFeature } from '../../apps/server/server-feature.js';

export const leadershipFeature = serverFeature({
  name: 'leadership',
  needs: ['cluster'],
  setup: ({ leaderWork, cluster }) => ({
    start: () => (cluster ? cluster.start(leaderWork) : leaderWork.start()),
    stop: () => leaderWork.stop(),
  }),
});
