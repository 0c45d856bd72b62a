// Cluster mode (issue 32), built from its parts: the NATS bus, this instance's presence row and its
// agents' presence, the commander that routes commands to the instance holding an agent, /hub/status
// across instances, and the leader lease that decides where the once-per-cluster work runs.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Logger } from '../../platform/logger.js';
import type { AgentHub } from '../agent-hub/agent-hub.js';
import type { HubStatusView } from '../agent-hub/hub-status.js';
import type { ThresholdEvaluator } from '../alerts/threshold-evaluator.js';
import type { TunnelManager } from '../tunnels/tunnel-manager.js';
import { BigReplies } from './big-replies.js';
import { ClusterBus } from './cluster-bus.js';
import { ClusterCommander } from './cluster-commander.js';
import { ClusterStatus } from './cluster-status.js';
import { ClusterTunnels } from './cluster-tunnels.js';
import { ClusterThresholds, type ThresholdSink } from './cluster-thresholds.js';
import { InstanceRegistry } from './instance-registry.js';
import { LeaderLease } from './leader-lease.js';
import { ClusterPresence } from './presence.js';
import type { LeaderJob } from './leader-work.js';

const KEYS_DELETED = 'rmm.cluster.api-keys.deleted';

export interface ClusterConfig {
  natsUrl: string;
  instanceId: string;
  advertiseAddress: string;
}


export interface ClusterNode {
  commander: ClusterCommander;
  /** For the hub's onPresence (the hub is built before the cluster, which needs the hub). */
  presenceChanged(agentId: string, holding: boolean, recorded?: Promise<void>): void;
  status(): Promise<HubStatusView>;
  /**
   * Cached API-key lookups are forgotten on every instance when keys are deleted on one: `forgetHere`
   * runs when another instance says so; the returned function says so to the others.
   */
  shareKeyRevocations(forgetHere: () => void): () => void;
  /** Tunnels of agents held by other instances, and this instance's answers for its own (cluster-tunnels.ts). */
  tunnels(manager: TunnelManager, localUrl: () => string | undefined): ClusterTunnels;
  /** Routes threshold evaluation to the leader's evaluator (see cluster-thresholds.ts). */
  routeThresholds(evaluator: ThresholdEvaluator): ThresholdSink;
  /** Joins the cluster; `leaderWork` runs while this instance is the leader. */
  start(leaderWork: LeaderJob): Promise<void>;
  stop(): Promise<void>;
}

export function createClusterNode(deps: {
  db: Kysely<Database>;
  logger: Logger;
  config: ClusterConfig;
  hub: AgentHub;
  localStatus: () => HubStatusView;
  /** Writes a connection event; logs its own failure and never rejects. */
  recordConnection: (agentId: string, type: 'connected', at: Date) => Promise<void>;
}): ClusterNode {
  const { db, config } = deps;
  const logger = deps.logger.child({ instance: config.instanceId });
  const bus = new ClusterBus(config.natsUrl, `rmm-${config.instanceId}`, logger);
  const replies = new BigReplies(db);
  const presence = new ClusterPresence(db, bus, config.instanceId, logger);
  const commander = new ClusterCommander(deps.hub, bus, presence, replies, config.instanceId, logger);
  const status = new ClusterStatus(db, bus, replies, config.instanceId, deps.localStatus);
  // Reaped as dead while alive (cut off from the database longer than the dead-after period): the
  // reaper deleted this instance's presence rows and wrote each agent a `disconnected` event, so each
  // held socket is listed and recorded as connected again.
  const rowLost = async () => {
    const at = new Date();
    await Promise.all(commander.heldAgents().map((id) => presence.local(id, true, at, deps.recordConnection(id, 'connected', at))));
  };
  const registry = new InstanceRegistry(db, { id: config.instanceId, advertiseAddress: config.advertiseAddress }, logger, rowLost);
  let leaderWork: LeaderJob | undefined;
  // Leadership changes start and stop the leader's work one after another, never overlapping.
  let handover: Promise<void> = Promise.resolve();
  let thresholds: ClusterThresholds | undefined;
  /** Subscriptions features asked for before the bus was connected. */
  const subscriptions: Array<() => void> = [];
  const lease = new LeaderLease(db, config.instanceId, logger, (leading) => {
    registry.lead(leading);
    thresholds?.lead(leading);
    handover = handover.then(async () => {
      if (leading) {
        leaderWork?.start();
        void replies.sweep().catch(() => undefined);
      } else {
        await leaderWork?.stop();
      }
    });
  });

  return {
    commander,
    presenceChanged: (agentId, holding, recorded) => commander.presenceChanged(agentId, holding, recorded),
    status: () => status.gather(),
    shareKeyRevocations(forgetHere) {
      subscriptions.push(() => bus.subscribe(KEYS_DELETED, (body) => {
        if ((body as { by?: string } | null)?.by !== config.instanceId) forgetHere();
      }));
      return () => bus.publish(KEYS_DELETED, { by: config.instanceId });
    },
    tunnels(manager, localUrl) {
      const remote = new ClusterTunnels(manager, deps.hub, bus, presence, config.instanceId, config.advertiseAddress, localUrl, logger);
      subscriptions.push(() => remote.serve());
      return remote;
    },
    routeThresholds(evaluator) {
      thresholds = new ClusterThresholds(bus, evaluator, logger);
      return thresholds;
    },
    async start(work) {
      leaderWork = work;
      logger.info({ nats: config.natsUrl.replace(/\/\/[^@/]*@/, '//') }, 'cluster mode: connecting to NATS');
      await bus.start();
      await registry.start();
      presence.start();
      status.serve();
      for (const subscribe of subscriptions) subscribe();
      thresholds?.start();
      lease.start();
    },
    async stop() {
      await lease.stop();
      await handover;
      presence.stop();
      await registry.stop();
      await bus.stop();
    },
  };
}
