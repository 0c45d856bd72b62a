// Cluster mode (issue 32) when NATS_URL is set: this instance joins the others (cluster-node.ts),
// hears which agents the hub holds, routes threshold evaluation to the leader, tells the others when
// API keys are deleted, and serves and reaches tunnels of agents held elsewhere. On a single server it
// provides the hub's own status and no cluster. It joins when every feature is running (the leadership
// feature starts it) and leaves after the hub has closed its sockets (listed before them, it stops after).
import { serverFeature } from '../../apps/server/server-feature.js';
import { localHubStatus, type HubStatusView } from '../agent-hub/hub-status.js';
import { createClusterNode, type ClusterNode } from './cluster-node.js';
import { internalUrlOf, type ClusterTunnels } from './cluster-tunnels.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerParts {
    /** This instance's membership of the cluster; undefined on a single server. */
    cluster: ClusterNode | undefined;
    /** Connected agents and tunnels: this instance's, or the whole cluster's. */
    hubStatus: () => Promise<HubStatusView>;
    /** Tunnels of agents held by other instances; undefined on a single server. */
    remoteTunnels: ClusterTunnels | undefined;
  }
}

export const clusterFeature = serverFeature({
  name: 'cluster',
  needs: ['hub', 'tunnels', 'connectionBatches', 'alerting', 'apiKeys'],
  setup({ app, db, logger, config, events, hub, tunnels, connectionBatches, alerting, apiKeys }) {
    const localStatus = () => localHubStatus(hub, tunnels);
    const clusterConfig = config.cluster;
    if (!clusterConfig) return { provides: { cluster: undefined, hubStatus: async () => localStatus(), remoteTunnels: undefined } };

    const cluster = createClusterNode({
      db: db.db,
      logger,
      config: clusterConfig,
      hub,
      localStatus,
      recordConnection: (agentId, type, at) =>
        connectionBatches.record({ agent_id: agentId, type, created_at: at }).catch((err: unknown) => logger.warn({ err, agentId }, 'could not record a connection event')),
    });
    events.on('agent.presence', ({ agentId, holding, recorded }) => cluster.presenceChanged(agentId, holding, recorded));
    alerting.routeThresholds(cluster.routeThresholds(alerting.thresholds));
    events.on('api-keys.deleted', cluster.shareKeyRevocations(() => apiKeys.forgetCachedKeysHere()));
    const localUrl = () => clusterConfig.internalUrl ?? internalUrlOf(app.server.address(), config.host, clusterConfig.advertiseAddress);
    const remoteTunnels = cluster.tunnels(tunnels, localUrl);
    return {
      provides: { cluster, hubStatus: () => cluster.status(), remoteTunnels },
      stop: () => cluster.stop(),
    };
  },
});
