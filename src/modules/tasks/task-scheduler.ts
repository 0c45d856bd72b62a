// The task scheduler: sleeps until the next task is due (or a minute, or until woken by a new or
// changed task), claims due tasks in one statement that two processes can run at once without running
// a task twice, and runs them. Each claim carries a lease this process renews; on start-up and every
// round, running tasks whose process is gone (this host's process no longer alive, or the lease run
// out) are closed as `error` with the reason, never left running or silently lost; except runs that
// were still waiting for their agent (nothing sent yet), which this process takes up and goes on with.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import { nextCronRun } from './cron.js';
import type { TaskRunner } from './task-runner.js';
import * as repo from './tasks.repo.js';
import { logFailure } from '../../db/db-errors.js';

/** The longest sleep between rounds; leases are renewed every round. */
const ROUND_MS = 60_000;
/** A claim not renewed for this long belongs to a process that is gone. */
const LEASE_MS = 5 * ROUND_MS;
const CLAIM_BATCH = 20;

export class TaskScheduler {
  /** host:pid:random, so this host can tell its own dead processes at once. */
  readonly claimant = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  /** Runs in progress by run id (a recurring task's next run may start while the last one's webhook is still being delivered). */
  readonly #running = new Map<number, { taskId: number; done: Promise<void> }>();
  #wake = new AbortController();
  #stop = new AbortController();
  #loop: Promise<void> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly runner: TaskRunner,
  ) {}

  start(): void {
    if (this.#loop) return;
    this.#stop = new AbortController();
    this.#loop = this.#run();
  }

  /**
   * Ends the loop. Runs in progress are abandoned to the next start's recovery (their agent commands fail
   * as the hub stops); runs waiting for their agent let go of their tasks first, for the next to take up.
   */
  async stop(): Promise<void> {
    this.#stop.abort();
    this.#wake.abort();
    await this.#loop;
    await this.runner.waitsEnded();
    this.#loop = undefined;
  }

  /** A task was created or made due: look again now instead of at the planned time. */
  wake(): void {
    this.#wake.abort();
  }

  /** One round: close abandoned runs, renew leases, start what is due. Exposed for tests and tools. */
  async round(now: Date = this.clock.now()): Promise<void> {
    await this.#recoverAbandoned(now);
    const leaseUntil = new Date(now.getTime() + LEASE_MS);
    await repo.renewLeases(this.db, this.claimant, [...new Set([...this.#running.values()].map((r) => r.taskId))], leaseUntil);
    const claimed = await repo.claimDue(this.db, now, this.claimant, leaseUntil, CLAIM_BATCH);
    for (const { task, runId } of claimed) this.#start(task, runId);
  }

  #start(task: repo.TaskRow, runId: number, resumed?: { startedAt: Date; waitingUntil: Date }): void {
    const done = this.runner
      .execute(task, runId, this.#stop.signal, resumed)
      .catch((err: unknown) => logFailure(this.logger, err, { taskId: task.id, runId }, 'task run could not be recorded'))
      .finally(() => this.#running.delete(runId));
    this.#running.set(runId, { taskId: task.id, done });
  }

  /** Waits for the runs in progress (tests; a stopping server does not). */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running.values()].map((r) => r.done));
  }

  async #run(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      // Armed before the round: a task created while the round runs wakes the sleep that follows it.
      const wake = new AbortController();
      this.#wake = wake;
      const roundAt = this.clock.now();
      try {
        await this.round(roundAt);
      } catch (err) {
        logFailure(this.logger, err, {}, 'task scheduler round failed');
      }
      const next = await repo.nextDueAt(this.db).catch(() => null);
      const now = this.clock.now().getTime();
      let wait = next === null ? ROUND_MS : Math.min(ROUND_MS, Math.max(0, next.getTime() - now));
      // Due already: at once if it fell due while the round ran; after a second if the round saw it
      // due and could not claim it (another process holds it, or the database failed), not in a spin.
      if (wait === 0 && next !== null && next <= roundAt) wait = 1_000;
      if (wait > 0) await this.clock.sleep(wait, wake.signal).catch(() => undefined);
    }
  }

  async #recoverAbandoned(now: Date): Promise<void> {
    for (const task of await repo.runningTasks(this.db)) {
      if (task.claimed_by === this.claimant && task.run_id !== null && this.#running.has(task.run_id)) continue;
      const reason = this.#abandonReason(task, now);
      if (!reason) continue;
      if (task.run_id !== null && task.waiting_until !== null && task.run_started_at !== null) {
        await this.#takeUp(task, task.run_id, { startedAt: task.run_started_at, waitingUntil: task.waiting_until }, reason, now);
        continue;
      }
      this.logger.warn({ taskId: task.id, runId: task.run_id }, `task run abandoned: ${reason}`);
      await repo.finishRun(this.db, {
        taskId: task.id,
        runId: task.run_id ?? -1,
        status: 'error',
        result: null,
        error: `Interrupted: ${reason}`,
        finishedAt: now,
        nextRunAt: task.cron ? nextCronRun(task.cron, now) : null,
      });
    }
  }

  /** Goes on with a run its server left while it waited for its agent: it sent nothing yet. */
  async #takeUp(task: repo.TaskRow, runId: number, resumed: { startedAt: Date; waitingUntil: Date }, reason: string, now: Date): Promise<void> {
    const mine = await repo.takeOver(this.db, task.id, task.claimed_by, this.claimant, new Date(now.getTime() + LEASE_MS));
    if (!mine) return;
    this.logger.info({ taskId: task.id, runId }, `task run taken up while it waits for its agent: ${reason}`);
    this.#start(mine, runId, resumed);
  }

  /**
   * Same host name and a pid that is not alive means the claimant died. Caveat: servers in separate
   * pid namespaces sharing a host name (containers with host networking) cannot tell each other's
   * pids; give each server its own host name there (compose does by default).
   */
  #abandonReason(task: repo.TaskRow, now: Date): string | undefined {
    const [host, pid] = (task.claimed_by ?? '').split(':');
    if (task.claimed_by === null) return 'no process had claimed it (its server stopped while it waited for the agent)';
    if (task.claimed_by === this.claimant) return 'this process lost track of it';
    if (host === os.hostname() && !processAlive(Number(pid))) return `the server process running it (${pid} on ${host}) stopped`;
    if (task.lease_until !== null && task.lease_until <= now) return `the server running it (${task.claimed_by}) stopped renewing its claim`;
    return undefined;
  }
}

function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return pid !== process.pid; // our own pid here is a previous incarnation's (restarted in a container)
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
