// One run of a task, from its claim to its webhook: an agent that is not connected when the task is due
// is waited for, up to the task's agent_wait_timeout (issue 57: runs due while agents reconnected after
// an instance restart failed at once), wherever in the cluster it connects; the kind's command runs; update kinds then wait for the agent to come back (contract §10:
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
import { logFailure } from '../../db/db-errors.js';

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

/** Why a single-agent run cannot go on: it failed with `error`, or it is no longer this runner's (`left`). */
type NotReady = { error: string } | 'left';

export class TaskRunner {
  /** Runs waiting for their agent, until each has let go of its task or gone on. */
  readonly #waits = new Set<Promise<unknown>>();

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

  /**
   * `resumed`: a run taken over while it waited for its agent (the server that claimed it stopped);
   * it keeps its start and the end of its wait.
   */
  async execute(task: repo.TaskRow, runId: number, signal: AbortSignal, resumed?: { startedAt: Date; waitingUntil: Date }): Promise<void> {
    const startedAt = resumed?.startedAt ?? this.clock.now();
    const started = (bulkId: number) => repo.noteRunResult(this.db, runId, { bulk_action_id: bulkId });
    const group = task.agent_id === null ? await runGroup(task, this.commands.bulk, this.clock, signal, started) : undefined;
    const ready = group ? true : await this.#agentReady(task, runId, signal, resumed?.waitingUntil);
    if (ready === 'left') return;
    const { status, result, error } = group ?? (ready === true ? await this.#perform(task, task.agent_id!, signal) : { status: 'error', result: null, error: ready.error });
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

  /** Resolves once every run waiting for its agent has let go of its task (the server stops) or gone on. */
  async waitsEnded(): Promise<void> {
    await Promise.allSettled([...this.#waits]);
  }

  /**
   * True when the agent is connected, at once or within the wait (`until`, set when resumed). The wait
   * is stored on the run, so a server that stops lets go of the task and the next one takes it up
   * (`left`); a run cancelled while it waited is `left` too: cancelling closed it.
   */
  async #agentReady(task: repo.TaskRow, runId: number, signal: AbortSignal, until?: Date): Promise<true | NotReady> {
    const agentId = task.agent_id!;
    const waitS = task.agent_wait_timeout ?? 0;
    if (until === undefined) {
      if (this.hub.isConnected(agentId)) return true;
      if (waitS === 0) return { error: 'The agent was not connected when the task was due' };
      until = new Date(this.clock.now().getTime() + waitS * 1000);
      await repo.startWaiting(this.db, runId, until);
      this.logger.info({ taskId: task.id, runId, agentId, until }, 'task run waits for its agent to connect');
    }
    const waited = this.#awaitAgent(agentId, until, signal).then(async (connected): Promise<true | NotReady> => {
      if (signal.aborted) {
        await repo.releaseClaim(this.db, task.id, task.claimed_by!);
        return 'left';
      }
      if (!(await repo.stopWaiting(this.db, runId))) return 'left';
      return connected || { error: `The agent was not connected when the task was due and did not connect within ${waitS} s` };
    });
    this.#waits.add(waited);
    return waited.finally(() => this.#waits.delete(waited));
  }

  /** Whether the agent is connected (here, or on another instance) by `until`; false at once on `signal`. */
  async #awaitAgent(agentId: string, until: Date, signal: AbortSignal): Promise<boolean> {
    for (;;) {
      if (this.hub.isConnected(agentId)) return true;
      const left = until.getTime() - this.clock.now().getTime();
      if (left <= 0 || signal.aborted) return false;
      await this.hub.nextConnection(agentId, left, signal);
    }
  }

  async #perform(task: repo.TaskRow, agentId: string, signal: AbortSignal): Promise<{ status: string; result: Record<string, unknown> | null; error: string | null }> {
    const kind = task.kind as TaskKind;
    let outcome;
    try {
      const origin = { source: 'task' as const, actor_type: 'system' as const, actor: `task ${task.id} (${task.name})` };
      outcome = await runKind(kind, task.params, agentId, { commander: this.hub, backups: this.backups, ...this.commands, origin });
    } catch (err) {
      if (!isAppError(err)) logFailure(this.logger, err, { taskId: task.id }, 'task run failed');
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
