// One run of a task, from its claim to its webhook: the agent must be connected when the task is due
// (else the run fails with that reason; "run when it comes online" would be a new status, not a change
// here); the kind's command runs; update kinds then wait for the agent to come back (contract §10:
// a new connection → online at once, else online only if connected when health_check_timeout ends);
// the run is closed and the task moved on; then the webhook, whose outcome is stored on the run.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { isAppError } from '../../platform/errors.js';
import type { Logger } from '../../platform/logger.js';
import type { AgentCommander, AgentReconnectWatch } from '../agent-hub/agent-commander.js';
import type { BackupService } from '../backups/backups.service.js';
import type { AgentService } from '../agents/agents.service.js';
import type { CommandHistory } from '../history/command-history.js';
import type { BulkService } from '../bulk/bulk.service.js';
import type { ScriptService } from '../scripts/scripts.service.js';
import { runGroup } from './group-run.js';
import { nextCronRun } from './cron.js';
import { runKind, UPDATE_KINDS, type TaskKind } from './task-kinds.js';
import * as repo from './tasks.repo.js';

export interface WebhookDeliverer {
  /** `signal` ends a delivery waiting between tries (the server is stopping). */
  deliver(url: string, payload: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>>;
}

/** A closed run, as alert rules on task outcomes see it. */
export interface FinishedRun {
  taskId: number;
  runId: number;
  name: string;
  kind: string;
  agentId: string;
  status: string;
  error: string | null;
  finishedAt: Date;
}

export class TaskRunner {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly hub: AgentCommander & AgentReconnectWatch,
    private readonly backups: BackupService,
    private readonly commands: { history: CommandHistory; scripts: ScriptService; agents: AgentService; bulk: BulkService },
    private readonly webhooks: WebhookDeliverer,
    /** Told about every closed run (alerting); must not throw. */
    private readonly finished: (run: FinishedRun) => void = () => undefined,
  ) {}

  async execute(task: repo.TaskRow, runId: number, signal: AbortSignal): Promise<void> {
    const startedAt = this.clock.now();
    const started = (bulkId: number) => repo.noteRunResult(this.db, runId, { bulk_action_id: bulkId });
    const group = task.agent_id === null ? await runGroup(task, this.commands.bulk, this.clock, signal, started) : undefined;
    const { status, result, error } = group ?? (await this.#perform(task, task.agent_id!, signal));
    const finishedAt = this.clock.now();
    const nextRunAt = task.cron ? nextCronRun(task.cron, finishedAt) : null;
    await repo.finishRun(this.db, { taskId: task.id, runId, status, result, error, finishedAt, nextRunAt });
    this.logger.info({ taskId: task.id, runId, status }, `task run ${status}`);
    // Alert rules on task outcomes judge agents: a group run tells them each agent's part.
    const outcomes = group ? group.agents : [{ agentId: task.agent_id!, status, error }];
    for (const one of outcomes) this.finished({ taskId: task.id, runId, name: task.name, kind: task.kind, agentId: one.agentId, status: one.status, error: one.error, finishedAt });
    if (task.webhook_url) {
      const payload = {
        event: 'task.finished',
        task_id: task.id,
        run_id: runId,
        name: task.name,
        kind: task.kind,
        agent_id: task.agent_id,
        customer_number: task.customer_number,
        status,
        result: result ?? (error ? { error } : null),
        started_at: startedAt.toISOString(),
        finished_at: finishedAt.toISOString(),
      };
      const outcome = await this.webhooks.deliver(task.webhook_url, payload, signal).catch((err: unknown) => ({ delivered: false, error: String(err) }));
      await repo.saveWebhookOutcome(this.db, runId, outcome);
    }
  }

  async #perform(task: repo.TaskRow, agentId: string, signal: AbortSignal): Promise<{ status: string; result: Record<string, unknown> | null; error: string | null }> {
    if (!this.hub.isConnected(agentId)) {
      return { status: 'error', result: null, error: 'The agent was not connected when the task was due' };
    }
    const kind = task.kind as TaskKind;
    let outcome;
    try {
      const origin = { source: 'task' as const, actor_type: 'system' as const, actor: `task ${task.id} (${task.name})` };
      outcome = await runKind(kind, task.params, agentId, { commander: this.hub, backups: this.backups, ...this.commands, origin });
    } catch (err) {
      if (!isAppError(err)) this.logger.error({ err, taskId: task.id }, 'task run failed');
      return { status: 'error', result: null, error: isAppError(err) ? `${err.code}: ${err.message}` : 'Internal error while running the task' };
    }
    if (outcome.error) return { status: 'error', result: outcome.result, error: outcome.error };
    if (!UPDATE_KINDS.has(kind)) return { status: 'completed', result: outcome.result, error: null };

    const cameBack = await this.hub.nextConnection(agentId, task.health_check_timeout * 1000, signal);
    const online = cameBack || this.hub.isConnected(agentId);
    const healthCheck = { agent_online: online, checked_at: this.clock.now().toISOString() };
    return { status: online ? 'completed' : 'completed_with_warning', result: { ...outcome.result, health_check: healthCheck }, error: null };
  }
}
