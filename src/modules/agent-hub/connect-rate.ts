// How often one agent may open its socket: a token bucket per agent id and credential. A healthy agent
// connects once and stays; one that reconnects in a loop (two devices cloned with the same agent id
// replacing each other, a crash loop, a hostile key holder) would otherwise make the server authenticate,
// look up, record and close sockets as fast as it can send them (issue 29: 784 a second stalled /healthz
// for seconds). The bucket is keyed by the credential too, so one customer's key cannot use up the
// allowance of another customer's agent.
import type { Clock } from '../../platform/clock.js';

export interface ConnectRateOptions {
  /** Connections allowed at once after a quiet spell. */
  burst: number;
  /** One more allowed per this many ms. */
  refillMs: number;
  /** Buckets kept; the least recently used go first (ids come from the network). */
  maxBuckets?: number;
}

export const DEFAULT_CONNECT_RATE: ConnectRateOptions = { burst: 10, refillMs: 6_000 };

interface Bucket {
  tokens: number;
  at: number;
}

export class ConnectRate {
  readonly #buckets = new Map<string, Bucket>();
  readonly #maxBuckets: number;

  constructor(
    private readonly clock: Clock,
    private readonly options: ConnectRateOptions = DEFAULT_CONNECT_RATE,
  ) {
    this.#maxBuckets = options.maxBuckets ?? 100_000;
  }

  /** Takes one connection from the bucket: 0 when allowed, else the seconds until the next one is. */
  take(credential: string, agentId: string): number {
    const key = `${credential}\n${agentId}`;
    const now = this.clock.now().getTime();
    const { burst, refillMs } = this.options;
    const previous = this.#buckets.get(key);
    const tokens = previous ? Math.min(burst, previous.tokens + (now - previous.at) / refillMs) : burst;
    // Re-inserted on every use, so the Map's order is least recently used first.
    this.#buckets.delete(key);
    if (tokens < 1) {
      this.#buckets.set(key, { tokens, at: now });
      return Math.max(1, Math.ceil(((1 - tokens) * refillMs) / 1000));
    }
    this.#buckets.set(key, { tokens: tokens - 1, at: now });
    if (this.#buckets.size > this.#maxBuckets) this.#buckets.delete(this.#buckets.keys().next().value!);
    return 0;
  }
}
