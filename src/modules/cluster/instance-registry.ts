// Each instance's sign of life in cluster mode: its row in cluster_instances, renewed every few
// seconds. The leader reaps instances that stopped renewing (they died): their agents' presence goes
// and each gets one `disconnected` event; tunnels died with the process that held them. An instance
// restarted under the same INSTANCE_ID first reaps what its previous run left.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Logger } from '../../platform/logger.js';
import { INSTANCE_DEAD_AFTER_MS } from './presence.js';
import { reapInstances, renewInstance } from './presence.repo.js';

const RENEW_MS = 5_000;

export class InstanceRegistry {
  #timer: NodeJS.Timeout | undefined;
  #leading = false;
  readonly #startedAt = new Date();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly instance: { id: string; advertiseAddress: string },
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const leftovers = await reapInstances(this.db, { deadAfterMs: INSTANCE_DEAD_AFTER_MS, self: this.instance.id });
    if (leftovers > 0) this.logger.info({ agents: leftovers }, 'closed the connections a previous run of this instance left in the presence table');
    await this.#renew();
    this.#timer = setInterval(() => void this.#round(), RENEW_MS);
  }

  /** The leader reaps dead instances; the others only renew. */
  lead(leading: boolean): void {
    this.#leading = leading;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    // Leaving cleanly: survivors need not wait for this row to age, and no agent stays listed here.
    await this.db.deleteFrom('agent_presence').where('instance_id', '=', this.instance.id).execute().catch(() => undefined);
    await this.db.deleteFrom('cluster_instances').where('id', '=', this.instance.id).execute().catch(() => undefined);
  }

  async #round(): Promise<void> {
    await this.#renew();
    if (!this.#leading) return;
    try {
      const reaped = await reapInstances(this.db, { deadAfterMs: INSTANCE_DEAD_AFTER_MS });
      if (reaped > 0) this.logger.warn({ agents: reaped }, 'a server instance stopped renewing its presence; its agents were recorded as disconnected');
    } catch (err) {
      this.logger.warn({ err }, 'could not reap dead server instances');
    }
  }

  async #renew(): Promise<void> {
    await renewInstance(this.db, { ...this.instance, startedAt: this.#startedAt }).catch((err: unknown) => this.logger.warn({ err }, 'could not renew this instance\'s presence row'));
  }
}
