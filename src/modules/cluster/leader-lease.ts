// One leader per cluster (issue 32) for the work that must happen once: the status monitor, the task
// scheduler, metrics maintenance, alert evaluation and notification delivery. A lease row in
// PostgreSQL, not a session advisory lock (those break behind connection poolers) and not a NATS KV
// lease. The holder renews it every RENEW_MS; it lapses LEASE_MS after the last renewal, and another
// instance takes it on its next try, so a dead leader is replaced within LEASE_MS + RENEW_MS (20 s).
// Expiry is judged by the database's clock, never two instances' clocks against each other. The token
// grows at every change of holder: a fencing number for work that wants to check it is still current.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Logger } from '../../platform/logger.js';

export const LEASE_MS = 15_000;
export const RENEW_MS = 5_000;

export interface LeaseOptions {
  name?: string;
  leaseMs?: number;
  renewMs?: number;
}

export class LeaderLease {
  #leading = false;
  #token: number | null = null;
  #renewedAt = 0;
  #timer: NodeJS.Timeout | undefined;
  #round: Promise<void> = Promise.resolve();
  readonly #name: string;
  readonly #leaseMs: number;
  readonly #renewMs: number;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly holder: string,
    private readonly logger: Logger,
    /** Told when this instance becomes leader (true) or stops being it (false). */
    private readonly changed: (leading: boolean) => void,
    options: LeaseOptions = {},
  ) {
    this.#name = options.name ?? 'leader';
    this.#leaseMs = options.leaseMs ?? LEASE_MS;
    this.#renewMs = options.renewMs ?? RENEW_MS;
  }

  get leading(): boolean {
    return this.#leading;
  }

  get token(): number | null {
    return this.#leading ? this.#token : null;
  }

  /** Tries at once, then every renewal interval. */
  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => this.#tick(), this.#renewMs);
    this.#tick();
  }

  /** Steps down and gives the lease up, so another instance need not wait for it to lapse. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#round;
    if (!this.#leading) return;
    this.#set(false);
    // Lapsed, not deleted: the next holder's token must still be larger than this one's.
    await this.db
      .updateTable('cluster_leases')
      .set({ expires_at: sql<Date>`now() - interval '1 millisecond'` })
      .where('name', '=', this.#name)
      .where('holder', '=', this.holder)
      .execute()
      .catch((err: unknown) => this.logger.warn({ err }, 'could not give up the leader lease; it lapses by itself'));
  }

  #tick(): void {
    // A renewal that hangs (the database away) must not let this instance lead past its lease.
    if (this.#leading && Date.now() - this.#renewedAt > this.#leaseMs - this.#renewMs) this.#set(false);
    this.#round = this.#round.then(() => this.#try());
  }

  async #try(): Promise<void> {
    const started = Date.now();
    try {
      const { rows } = await sql<{ holder: string; token: number }>`
        insert into cluster_leases (name, holder, token, expires_at)
        values (${this.#name}, ${this.holder}, 1, now() + ${`${this.#leaseMs} milliseconds`}::interval)
        on conflict (name) do update
          set holder = excluded.holder,
              token = case when cluster_leases.holder = excluded.holder then cluster_leases.token else cluster_leases.token + 1 end,
              expires_at = excluded.expires_at
          where cluster_leases.holder = excluded.holder or cluster_leases.expires_at < now()
        returning holder, token::int8 as token`.execute(this.db);
      const won = rows[0]?.holder === this.holder;
      if (won) {
        this.#renewedAt = started;
        this.#token = Number(rows[0]!.token);
      }
      if (won !== this.#leading) this.#set(won);
    } catch (err) {
      this.logger.warn({ err }, 'could not renew or take the leader lease');
      if (this.#leading && Date.now() - this.#renewedAt > this.#leaseMs - this.#renewMs) this.#set(false);
    }
  }

  #set(leading: boolean): void {
    this.#leading = leading;
    this.logger.info({ lease: this.#name, token: this.#token }, leading ? 'this instance now leads the cluster (runs the once-per-cluster work)' : 'this instance no longer leads the cluster');
    this.changed(leading);
  }
}
