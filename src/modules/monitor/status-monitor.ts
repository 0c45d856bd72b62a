// The status monitor (spec §3): every MONITOR_INTERVAL_SECONDS it recomputes agent statuses and writes
// an online/stale/offline event for each agent whose status changed, in one transaction. Long-lived:
// start()/stop() as a PeriodicJob on the injected clock. After each check, the offline alert rules.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import { PeriodicJob } from '../../platform/periodic-job.js';
import { insertEvents } from '../agents/events.repo.js';
import { advanceStatuses } from './status-monitor.repo.js';
import { logFailure } from '../../db/db-errors.js';

export class StatusMonitor {
  readonly #job: PeriodicJob;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    intervalMs: number,
    private readonly logger: Logger,
    /** Runs after each check (the offline alert rules ride on the monitor); a failure is logged, never thrown. */
    private readonly afterCheck: () => Promise<void> = async () => undefined,
  ) {
    this.#job = new PeriodicJob('status monitor check', clock, intervalMs, logger, () => this.runOnce());
  }

  /** One check, then what rides on it; returns how many events it wrote. */
  async runOnce(): Promise<number> {
    const now = this.clock.now();
    const written = await this.db.transaction().execute(async (trx) => {
      const changed = await advanceStatuses(trx, now);
      await insertEvents(trx, changed.map((c) => ({ agent_id: c.id, type: c.status, created_at: now })));
      return changed.length;
    });
    await this.afterCheck().catch((err: unknown) => logFailure(this.logger, err, {}, 'alert evaluation after the status check failed'));
    return written;
  }

  start(): void {
    this.#job.start();
  }

  stop(): Promise<void> {
    return this.#job.stop();
  }
}
