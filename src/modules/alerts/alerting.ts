// Builds alerting (issue 31) from the server's parts: notification channels, maintenance windows, alert
// rules, the engine that fires and resolves alerts, its evaluators (thresholds from the heartbeat
// path, offline after each status monitor pass, certificates/backups/updates and reminders on a
// timer, task outcomes as runs close) and the outbox dispatcher that delivers notifications. The
// periodic jobs start and stop with the app; in cluster mode they become once-per-cluster claims.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import { CheckStateWatch } from './check-state-watch.js';
import { PeriodicJob } from '../../platform/periodic-job.js';
import type { SecretBox } from '../../platform/secret-box.js';
import { MaintenanceWindowService } from '../maintenance/maintenance-windows.service.js';
import { ChannelService } from '../notifications/channels.service.js';
import { OutboxDispatcher } from '../notifications/outbox-dispatcher.js';
import type { SettingsService } from '../settings/settings.service.js';
import { AlertRuleService } from './alert-rules.service.js';
import { AlertEngine } from './alert-engine.js';
import { AlertEvaluation } from './alert-evaluation.js';
import { AlertService } from './alerts.service.js';
import { TaskOutcomes } from './task-outcomes.js';
import { ThresholdEvaluator, type ObservedHeartbeat } from './threshold-evaluator.js';
import type { ThresholdSink } from '../cluster/cluster-thresholds.js';

/** Certificates, backups, pending updates and reminders: minutes matter, seconds do not. */
const PERIODIC_MS = 60_000;

export interface AlertingDeps {
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  box: SecretBox;
  settings: SettingsService;
  allowLoopback: boolean;
  publicUrl: string | undefined;
  /** Told whether each notification try was delivered (Prometheus). */
  notificationOutcome?: (delivered: boolean) => void;
}

export interface AlertingFeature {
  channels: ChannelService;
  windows: MaintenanceWindowService;
  rules: AlertRuleService;
  alerts: AlertService;
  evaluation: AlertEvaluation;
  thresholds: ThresholdEvaluator;
  taskOutcomes: TaskOutcomes;
  /** Check-state rules judged as checks change state (issue 61). */
  checkStates: CheckStateWatch;
  dispatcher: OutboxDispatcher;
  /** For HeartbeatWriter's `committed`: feeds the threshold evaluator the stored heartbeats' samples. */
  heartbeatsCommitted(observed: readonly ObservedHeartbeat[]): void;
  /** Cluster mode: heartbeats, rule changes and hand resolutions go through `sink` (to the leader's evaluator). */
  routeThresholds(sink: ThresholdSink): void;
  start(): void;
  stop(): Promise<void>;
}

export function createAlertingFeature(deps: AlertingDeps): AlertingFeature {
  const { db, clock, logger } = deps;
  const channels = new ChannelService({ db, box: deps.box, clock, logger, allowLoopback: deps.allowLoopback, webhookSecret: () => deps.settings.secret('webhook_secret') });
  const windows = new MaintenanceWindowService(db, clock);
  const dispatcher = new OutboxDispatcher(db, clock, logger, {
    deliver: async (channelId, message, signal) => {
      const outcome = await channels.deliver(channelId, message, signal);
      deps.notificationOutcome?.(outcome.delivered);
      return outcome;
    },
  });
  // The engine tells the threshold evaluator about alerts resolved by hand; the evaluator needs the engine.
  // Everything for the evaluator goes through `sink`: the evaluator itself, or in cluster mode the route
  // to the leader's (routeThresholds).
  const sink: { thresholds?: ThresholdSink } = {};
  const engine = new AlertEngine({
    db,
    clock,
    logger,
    windows: () => windows.snapshot(),
    consoleUrl: async () => deps.publicUrl ?? (await deps.settings.agentUrls()).backend_url?.replace(/\/+$/, '') ?? null,
    queued: () => dispatcher.wake(),
    resolvedByHand: (alert) => sink.thresholds?.forget(alert),
  });
  const thresholds = new ThresholdEvaluator(db, logger, engine);
  sink.thresholds = thresholds;
  const evaluation = new AlertEvaluation(db, clock, logger, engine);
  const taskOutcomes = new TaskOutcomes(db, logger, engine);
  const rules = new AlertRuleService(db, clock, {
    changed: () => sink.thresholds?.rulesChanged(),
    beforeDelete: async (ruleId, by) => {
      const open = await alerts.openOfRule(ruleId);
      await engine.resolve(ruleId, open, by, 'the rule was deleted');
    },
  });
  const alerts = new AlertService(db, clock, engine);
  const periodic = new PeriodicJob('alert evaluation', clock, PERIODIC_MS, logger, () => evaluation.runPeriodic());
  const checkStates = new CheckStateWatch(clock, logger, () => evaluation.checkStates());

  return {
    channels,
    windows,
    rules,
    alerts,
    evaluation,
    thresholds,
    taskOutcomes,
    checkStates,
    dispatcher,
    routeThresholds(route) {
      sink.thresholds = route;
    },
    heartbeatsCommitted: (observed) => sink.thresholds?.observe(observed),
    start() {
      periodic.start();
      dispatcher.start();
      checkStates.start();
    },
    async stop() {
      await Promise.all([periodic.stop(), dispatcher.stop(), checkStates.stop()]);
      await Promise.all([thresholds.idle(), taskOutcomes.idle()]);
    },
  };
}

