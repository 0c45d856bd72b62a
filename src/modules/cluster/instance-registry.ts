// Each instance's sign of life in cluster mode: its row in cluster_instances, renewed every few
// seconds. The leader reaps instances that stopped renewing (they died): their agents' presence goes
// and each gets one `disconnected` event; tunnels died with the process that held them. An instance
// restarted under the same INSTANCE_ID first reaps what its previous run left.
//
// A database outage stops every instance's renewals alike, so rows age that belong to live instances.
// The leader therefore reaps only once the database has answered its own renewals for a whole
// dead-after period: every instance then had that long to renew. Should an instance be reaped all the
// same (cut off from the database alone, for longer than that), its next renewal finds its row gone
// and `rowLost` writes its agents' presence again.
import { performance } from 'node:perf_hooks';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Logger } from '../../platform/logger.js';
import { INSTANCE_DEAD_AFTER_MS } from './presence.js';
import { reapInstances, renewInstance } from './presence.repo.js';

export interface RegistryTiming {
  renewMs: number;
  deadAfterMs: number;
}

const DEFAULT_TIMING: RegistryTiming = { renewMs: 5_000, deadAfterMs: INSTANCE_DEAD_AFTER_MS };

export class InstanceRegistry {
  #timer: NodeJS.Timeout | undefined;
  #leading = false;
  readonly #startedAt = new Date();
  /** Since when (performance.now()) every renewal succeeded; null after a failed one. */
  #healthySince: number | null = null;
  #renewedOnce = false;
  /** The round under way, which stop() waits for: a renewal finishing after the row's delete wrote it back. */
  #inFlight: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly instance: { id: string; advertiseAddress: string },
    private readonly logger: Logger,
    /** This instance's row was found gone (reaped as dead while alive): write its presence again. */
    private readonly rowLost: () => Promise<void>,
    private readonly timing: RegistryTiming = DEFAULT_TIMING,
  ) {}

  async start(): Promise<void> {
    const leftovers = await reapInstances(this.db, { deadAfterMs: this.timing.deadAfterMs, self: this.instance.id });
    if (leftovers > 0) this.logger.info({ agents: leftovers }, 'closed the connections a previous run of this instance left in the presence table');
    await this.#renew();
    this.#timer = setInterval(() => {
      this.#inFlight = this.#round();
    }, this.timing.renewMs);
  }

  /** The leader reaps dead instances; the others only renew. */
  lead(leading: boolean): void {
    this.#leading = leading;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#inFlight;
    // Leaving cleanly: survivors need not wait for this row to age, and no agent stays listed here.
    await this.db.deleteFrom('agent_presence').where('instance_id', '=', this.instance.id).execute().catch(() => undefined);
    await this.db.deleteFrom('cluster_instances').where('id', '=', this.instance.id).execute().catch(() => undefined);
  }

  async #round(): Promise<void> {
    if (this.#stopped) return;
    const renewed = await this.#renew();
    if (!renewed || !this.#leading || this.#healthySince === null) return;
    if (performance.now() - this.#healthySince < this.timing.deadAfterMs) return;
    try {
      const reaped = await reapInstances(this.db, { deadAfterMs: this.timing.deadAfterMs });
      if (reaped > 0) this.logger.warn({ agents: reaped }, 'a server instance stopped renewing its presence; its agents were recorded as disconnected');
    } catch (err) {
      this.logger.warn({ err }, 'could not reap dead server instances');
    }
  }

  async #renew(): Promise<boolean> {
    let inserted: boolean;
    try {
      inserted = await renewInstance(this.db, { ...this.instance, startedAt: this.#startedAt });
    } catch (err) {
      this.#healthySince = null;
      this.logger.warn({ err }, "could not renew this instance's presence row");
      return false;
    }
    this.#healthySince ??= performance.now();
    if (inserted && this.#renewedOnce) {
      this.logger.warn('this instance was taken for dead (its presence row was reaped); writing its agents\' presence again');
      await this.rowLost().catch((err: unknown) => this.logger.warn({ err }, "could not write this instance's agents' presence again"));
    }
    this.#renewedOnce = true;
    return true;
  }
}
