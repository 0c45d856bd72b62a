// Scheduled tasks: the webhook sender (settings' secret, loopback only when WEBHOOK_ALLOW_LOOPBACK),
// the runner, the scheduler (once per installation: leader work) and /tasks routes. Every closed run
// is announced (`task.run-finished`: Prometheus and the task-outcome alert rules), as is every webhook
// delivery's outcome.
import { serverFeature } from '../../apps/server/server-feature.js';
import { TaskRunner, type FinishedRun } from './task-runner.js';
import { TaskScheduler } from './task-scheduler.js';
import { taskRoutes } from './tasks.routes.js';
import { TaskService } from './tasks.service.js';
import { checkWebhookUrl } from './webhook-target.js';
import { WebhookSender } from './webhook-sender.js';

declare module '../../apps/server/server-feature.js' {
  interface ServerEvents {
    'task.run-finished': FinishedRun;
    'task.webhook-delivered': { delivered: boolean };
  }
}

export const tasksFeature = serverFeature({
  name: 'tasks',
  needs: ['commander', 'agents', 'backups', 'history', 'scripts', 'bulk', 'settings'],
  setup({ db, clock, logger, config, events, leaderWork, commander, agents, backups, history, scripts, bulk, settings }) {
    const allowLoopback = config.webhookAllowLoopback;
    const webhooks = new WebhookSender({ clock, allowLoopback, secret: () => settings.secret('webhook_secret'), logger });
    const deliver = async (url: string, payload: Record<string, unknown>, signal: AbortSignal) => {
      const outcome = await webhooks.deliver(url, payload, { signal });
      events.emit('task.webhook-delivered', { delivered: outcome.delivered });
      return { ...outcome };
    };
    const runner = new TaskRunner(db.db, clock, logger, commander, backups, { history, scripts, agents, bulk }, { deliver }, (run) => events.emit('task.run-finished', run));
    const scheduler = new TaskScheduler(db.db, clock, logger, runner);
    leaderWork.add(scheduler);
    const tasks = new TaskService(db.db, {
      agents,
      clock,
      checkWebhookUrl: (url) => checkWebhookUrl(url, { allowLoopback }),
      wake: () => scheduler.wake(),
    });
    return { routes: (api) => api.register(taskRoutes, { tasks }) };
  },
});
