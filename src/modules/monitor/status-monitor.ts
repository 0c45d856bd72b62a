// The status monitor (spec §3): every MONITOR_INTERVAL_SECONDS it recomputes agent statuses and writes
// an online/stale/offline event for each agent whose status changed, in one transaction. Long-lived:
// start()/stop() as a PeriodicJob on the injected clock.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import { PeriodicJob } from '../../platform/periodic-job.js';
import { insertEvents } from '../agents/events.repo.js';
import { advanceStatuses } from './status-monitor.repo.js';

export class StatusMonitor {
  readonly #job: PeriodicJob;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    intervalMs: number,
    logger: Logger,
  ) {
    this.#job = new PeriodicJob('status monitor check', clock, intervalMs, logger, () => this.runOnce());
  }

  /** One check; returns how many events it wrote. */
  async runOnce(): Promise<number> {
    const now = this.clock.now();
    return this.db.transaction().execute(async (trx) => {
      const changed = await advanceStatuses(trx, now);
      await insertEvents(trx, changed.map((c) => ({ agent_id: c.id, type: c.status, created_at: now })));
      return changed.length;
    });
  }

  start(): void {
    this.#job.start();
  }

  stop(): Promise<void> {
    return this.#job.stop();
  }
}
