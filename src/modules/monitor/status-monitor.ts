// The status monitor (spec §3): every MONITOR_INTERVAL_SECONDS it recomputes agent statuses and writes
// an online/stale/offline event for each agent whose status changed, in one transaction. Long-lived:
// start()/stop() with an AbortController, sleeping on the injected clock.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import { insertEvents } from '../agents/events.repo.js';
import { advanceStatuses } from './status-monitor.repo.js';

export class StatusMonitor {
  #controller: AbortController | undefined;
  #loop: Promise<void> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

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
    if (this.#controller) return;
    const controller = new AbortController();
    this.#controller = controller;
    this.#loop = (async () => {
      while (!controller.signal.aborted) {
        try {
          await this.runOnce();
        } catch (err) {
          this.logger.error({ err }, 'status monitor check failed; trying again next interval');
        }
        await this.clock.sleep(this.intervalMs, controller.signal).catch(() => undefined);
      }
    })();
  }

  async stop(): Promise<void> {
    this.#controller?.abort();
    await this.#loop;
    this.#controller = undefined;
    this.#loop = undefined;
  }
}
