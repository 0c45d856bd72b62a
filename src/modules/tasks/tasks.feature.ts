// Builds the task feature from the server's parts: the webhook sender (settings' secret, loopback only
// when WEBHOOK_ALLOW_LOOPBACK), the runner, the scheduler and the service the routes use.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import type { AgentCommander, AgentReconnectWatch } from '../agent-hub/agent-commander.js';
import type { AgentService } from '../agents/agents.service.js';
import type { BackupService } from '../backups/backups.service.js';
import type { CommandHistory } from '../history/command-history.js';
import type { BulkService } from '../bulk/bulk.service.js';
import type { ScriptService } from '../scripts/scripts.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import { TaskRunner, type FinishedRun } from './task-runner.js';
import { TaskScheduler } from './task-scheduler.js';
import { TaskService } from './tasks.service.js';
import { checkWebhookUrl } from './webhook-target.js';
import { WebhookSender } from './webhook-sender.js';

export interface TaskFeatureDeps {
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  /** The hub, or the cluster's commander: commands and waiting for the agent to come back. */
  hub: AgentCommander & AgentReconnectWatch;
  agents: AgentService;
  backups: BackupService;
  history: CommandHistory;
  scripts: ScriptService;
  bulk: BulkService;
  settings: SettingsService;
  allowLoopback: boolean;
  /** Told about every closed run (alert rules on task outcomes). */
  runFinished?: (run: FinishedRun) => void;
  /** Told whether each webhook was delivered (Prometheus). */
  webhookOutcome?: (delivered: boolean) => void;
}

export function createTaskFeature(deps: TaskFeatureDeps): { service: TaskService; scheduler: TaskScheduler } {
  const webhooks = new WebhookSender({
    clock: deps.clock,
    allowLoopback: deps.allowLoopback,
    secret: () => deps.settings.secret('webhook_secret'),
    logger: deps.logger,
  });
  const runner = new TaskRunner(deps.db, deps.clock, deps.logger, deps.hub, deps.backups, { history: deps.history, scripts: deps.scripts, agents: deps.agents, bulk: deps.bulk }, {
    deliver: async (url, payload, signal) => {
      const outcome = await webhooks.deliver(url, payload, { signal });
      deps.webhookOutcome?.(outcome.delivered);
      return { ...outcome };
    },
  }, deps.runFinished);
  const scheduler = new TaskScheduler(deps.db, deps.clock, deps.logger, runner);
  const service = new TaskService(deps.db, {
    agents: deps.agents,
    clock: deps.clock,
    checkWebhookUrl: (url) => checkWebhookUrl(url, { allowLoopback: deps.allowLoopback }),
    wake: () => scheduler.wake(),
  });
  return { service, scheduler };
}
