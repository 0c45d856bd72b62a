// Runs bulk actions: every pass (2 s, or at once when an action is made) it closes what is overdue,
// then claims the waiting results whose agent is connected (on this instance or, in cluster mode, any)
// and runs them, at most MAX_PARALLEL at a time here. A claim is a lease renewed each pass, so when the
// instance running a result stops, another closes it as failed instead of leaving it running for ever;
// it is not run again, as the agent may have run it already.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { isAppError } from '../../platform/errors.js';
import type { Logger } from '../../platform/logger.js';
import { runOn, type BulkAction, type KindDeps } from './bulk-kinds.js';
import * as repo from './bulk.repo.js';
import { logFailure } from '../../db/db-errors.js';

const PASS_MS = 2000;
const LEASE_MS = 30_000;
const MAX_PARALLEL = 16;
/** Waiting rows looked at per pass; more wait for later passes (oldest first). */
const SCAN_LIMIT = 10_000;

export class BulkRunner {
  readonly #running = new Map<number, Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #pass: Promise<void> | undefined;
  #again = false;
  /**
   * The agents with a waiting result at the last pass (undefined: not known, e.g. before the first pass
   * or when the scan hit its limit). A connecting agent wakes the runner only if it is one of them:
   * waking on every connect ran a pass per socket in a reconnect storm (440 passes/s, three statements
   * each, on the embedded database's single thread), for nothing. Results made since (another instance's
   * actions) are found by the timer's pass, within PASS_MS.
   */
  #waitingAgents: Set<string> | undefined;
  // Not stopped before start(): without the background jobs (tests), wakes alone drive it.
  #stopped = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly instanceId: string,
    private readonly deps: KindDeps,
  ) {}

  /** Passes every 2 s as well: expiries, and agents that connected to another instance. */
  start(): void {
    this.#timer = setInterval(() => this.wake(), PASS_MS);
    this.wake();
  }

  /** Runs a pass now (or right after the one under way). */
  wake(): void {
    if (this.#stopped) return;
    if (this.#pass) {
      this.#again = true;
      return;
    }
    this.#pass = this.#runPass()
      .catch((err: unknown) => logFailure(this.logger, err, {}, 'bulk action pass failed'))
      .finally(() => {
        this.#pass = undefined;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  /** An agent's socket opened here: run a pass now if a result is waiting for it. */
  agentConnected(agentId: string): void {
    if (this.#waitingAgents === undefined || this.#waitingAgents.has(agentId)) this.wake();
  }

  /** Stops taking work and waits for the pass under way; results still running end with their commands. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#pass;
    await Promise.allSettled(this.#running.values());
  }

  async #runPass(): Promise<void> {
    const now = this.clock.now();
    await repo.renewLeases(this.db, [...this.#running.keys()], this.instanceId, new Date(now.getTime() + LEASE_MS));
    await repo.closeOverdue(this.db, now);
    const room = MAX_PARALLEL - this.#running.size;
    if (room <= 0) return;
    const waiting = await repo.waitingRows(this.db, now, SCAN_LIMIT);
    this.#waitingAgents = waiting.length < SCAN_LIMIT ? new Set(waiting.map((row) => row.agent_id)) : undefined;
    const ready = waiting.filter((row) => this.deps.commander.isConnected(row.agent_id)).slice(0, room);
    const claimed = new Set(await repo.claim(this.db, ready.map((r) => Number(r.id)), this.instanceId, now, new Date(now.getTime() + LEASE_MS)));
    for (const row of ready) {
      const id = Number(row.id);
      if (!claimed.has(id)) continue;
      const run = this.#run(row).finally(() => this.#running.delete(id));
      this.#running.set(id, run);
    }
  }

  async #run(row: repo.OpenResult): Promise<void> {
    const origin = { source: 'bulk' as const, actor_type: row.actor_type, actor: row.actor };
    let outcome;
    try {
      outcome = await runOn(row.action as BulkAction, row.params, { id: row.agent_id, platform: row.platform }, origin, this.deps);
    } catch (err) {
      // It went away before the command left: wait for it again.
      const back = isAppError(err) && err.code === 'AGENT_NOT_CONNECTED';
      if (!back) this.logger.error({ err, resultId: row.id }, 'bulk action result failed');
      outcome = back
        ? { status: 'waiting' as const, result: null, error: null, history_id: null }
        : { status: 'failed' as const, result: null, error: 'Internal error while running the action', history_id: null };
    }
    if (outcome.status === 'waiting') this.#waitingAgents?.add(row.agent_id);
    const finishedAt = outcome.status === 'waiting' ? null : this.clock.now();
    await repo
      .finishResult(this.db, Number(row.id), { ...outcome, finished_at: finishedAt })
      .catch((err: unknown) => logFailure(this.logger, err, { resultId: row.id }, 'could not store a bulk action result'));
  }
}
