// Metric thresholds in cluster mode (issue 32): a threshold's state (crossing since when) lives in the
// evaluator's memory, and an agent's heartbeats reach any instance behind the load balancer, so they
// must all be judged in one place: the leader's evaluator. Other instances send it the samples their
// committed heartbeats yielded (small: no documents), in bus messages of at most CHUNK heartbeats. A new
// leader reloads rules and state from the database before judging. Rule changes and alerts resolved by
// hand, which happen on whichever instance took the request, are announced to all.
// While NATS is down, only the heartbeats the leader itself receives are judged: a crossing may be
// noticed late, never invented.
import type { Subscription } from '@nats-io/transport-node';
import type { Logger } from '../../platform/logger.js';
import type { AlertRow } from '../alerts/alerts.repo.js';
import type { ObservedHeartbeat, ThresholdEvaluator } from '../alerts/threshold-evaluator.js';
import type { ClusterBus } from './cluster-bus.js';

const SAMPLES = 'rmm.cluster.thresholds.samples';
const RULES_CHANGED = 'rmm.cluster.thresholds.rules-changed';
const FORGET = 'rmm.cluster.thresholds.forget';
/** Heartbeats per bus message: about 1.5 KB of samples each, well under NATS's 1 MB default limit. */
const CHUNK = 100;

type WireHeartbeat = Omit<ObservedHeartbeat, 'at'> & { at: string };
type ForgetKey = Pick<AlertRow, 'rule_id' | 'agent_id' | 'label'>;

/** What alerting calls instead of the evaluator itself (see AlertingFeature.routeThresholds). */
export interface ThresholdSink {
  observe(batch: readonly ObservedHeartbeat[]): void;
  rulesChanged(): void;
  forget(alert: ForgetKey): void;
}

export class ClusterThresholds implements ThresholdSink {
  #leading = false;
  #samples: Subscription | undefined;

  constructor(
    private readonly bus: ClusterBus,
    private readonly evaluator: ThresholdEvaluator,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.bus.subscribe(RULES_CHANGED, () => this.evaluator.rulesChanged());
    this.bus.subscribe(FORGET, (body) => this.evaluator.forget(body as ForgetKey));
  }

  lead(leading: boolean): void {
    this.#leading = leading;
    if (leading && !this.#samples) {
      // What this instance remembers may be old: start again from what the database holds.
      this.evaluator.rulesChanged();
      this.#samples = this.bus.subscribe(SAMPLES, (body) => this.evaluator.observe((body as WireHeartbeat[]).map((h) => ({ ...h, at: new Date(h.at) }))));
    } else if (!leading && this.#samples) {
      this.#samples.unsubscribe();
      this.#samples = undefined;
    }
  }

  observe(batch: readonly ObservedHeartbeat[]): void {
    if (this.#leading) return this.evaluator.observe(batch);
    if (!this.bus.available) {
      this.logger.debug({ heartbeats: batch.length }, 'threshold samples not sent to the leader: the cluster bus is down');
      return;
    }
    for (let i = 0; i < batch.length; i += CHUNK) this.bus.publish(SAMPLES, batch.slice(i, i + CHUNK));
  }

  rulesChanged(): void {
    this.evaluator.rulesChanged();
    this.bus.publish(RULES_CHANGED, null);
  }

  forget(alert: ForgetKey): void {
    this.evaluator.forget(alert);
    this.bus.publish(FORGET, { rule_id: alert.rule_id, agent_id: alert.agent_id, label: alert.label });
  }
}
