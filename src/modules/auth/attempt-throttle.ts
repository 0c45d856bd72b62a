// Throttling of failed API-key attempts per source address, in memory (ApiKeyThrottle), bounded so that
// an attacker cannot grow it, reporting each throttled address in summary, never per attempt. A source
// may fail `maxFailures` times within `windowMs`; after that its wrong keys get 429 TOO_MANY_ATTEMPTS with
// Retry-After until the window has passed. A valid key is never refused: the key is checked first and
// the throttle only turns what fails anyway from a 401 into a 429 (a key has >= 190 random bits, so
// the throttle is about noise and telling a broken client to back off, not about odds). Password
// sign-in is throttled in login-throttle.ts.
import { isIPv6 } from 'node:net';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';

export interface ThrottlePolicy {
  readonly maxFailures: number;
  readonly windowMs: number;
}

/**
 * 30 failed API-key attempts per address in 5 minutes. A misconfigured agent with an old key retries
 * with a back-off that reaches once a minute (about 10 failures in its first 5 minutes), so even three
 * of them behind one NAT stay under it; a guesser at 1,200/s is stopped after 25 ms and then gets 30
 * tries per 5 minutes (a key has ≥ 190 random bits, so that is no chance at all).
 */
export const API_KEY_THROTTLE: ThrottlePolicy = { maxFailures: 30, windowMs: 5 * 60_000 };

/** 429 TOO_MANY_ATTEMPTS whose Retry-After (whole seconds, at least 1) runs until `freeAt`. */
export function tooManyAttempts(message: string, freeAt: number, now: number): AppError {
  const retryAfter = Math.max(1, Math.ceil((freeAt - now) / 1000));
  return new AppError('TOO_MANY_ATTEMPTS', message, { headers: { 'retry-after': String(retryAfter) } });
}

/** What is logged and audited about one throttled address, once per period. */
export interface GuessingSummary {
  /** The address, or its /64 for IPv6. */
  address: string;
  /** Failed and refused API-key attempts since the last summary of this address. */
  attempts: number;
  /** Seconds those attempts span (since the previous summary or the first failure). */
  periodSeconds: number;
  throttledUntil: Date;
}

interface Tracked {
  windowStart: number;
  failures: number;
  /** Attempts taken (begin) whose key is still being checked: they count against the limit already. */
  pending: number;
  /** Attempts (failed, or refused while throttled) not yet in a summary. */
  unreported: number;
  /** When the last summary of this address was made; null before the first. */
  reportedAt: number | null;
}

/** What became of a wrong or empty key: the 429 when its address was throttled (else it is a 401), and a summary when one is due. */
export interface FailedKey {
  error: AppError | null;
  summary: GuessingSummary | null;
}

/** One API-key attempt, taken before its key is checked; exactly one of its methods is called once the check is done. */
export interface KeyAttempt {
  /** The key was valid, or refused for a reason of its own (expired, or not checkable now): nothing is counted. */
  passed(): void;
  /** The key was wrong or empty. */
  failed(): FailedKey;
}

/** Addresses tracked at once; beyond it the oldest are forgotten (about 100 bytes each). */
export const MAX_TRACKED_ADDRESSES = 10_000;

const THROTTLED = 'Too many failed API-key attempts from this address; try again later';

/**
 * Failed API-key attempts per source address. An attempt is taken synchronously, before its key is
 * checked (an await), so however many arrive at once no more than the limit are answered 401: the
 * rest see the slots already taken and, if their key is wrong, get 429. A valid key is accepted from a
 * throttled address too, and clears nothing (an attacker holding one valid key must not be able to
 * reset the count). Summaries come when an address crosses the limit and then at most once per window
 * while it goes on.
 */
export class ApiKeyThrottle {
  readonly #tracked = new Map<string, Tracked>();

  constructor(
    private readonly clock: Clock,
    private readonly policy: ThrottlePolicy = API_KEY_THROTTLE,
    private readonly maxAddresses = MAX_TRACKED_ADDRESSES,
  ) {}

  get trackedAddresses(): number {
    return this.#tracked.size;
  }

  /** Takes an attempt for the address: a slot under the limit, or, when none is left, a wrong key will be refused. */
  begin(address: string): KeyAttempt {
    const entry = this.#current(address, this.clock.now().getTime());
    const counted = entry.failures + entry.pending < this.policy.maxFailures;
    if (counted) entry.pending++;
    let open = true;
    const close = (): boolean => {
      const wasOpen = open;
      open = false;
      if (wasOpen && counted) entry.pending--;
      return wasOpen;
    };
    return {
      passed: () => {
        // An address that only ever presented valid keys is not kept.
        if (close() && entry.failures === 0 && entry.pending === 0 && entry.unreported === 0 && entry.reportedAt === null && this.#tracked.get(address) === entry) {
          this.#tracked.delete(address);
        }
      },
      failed: () => (close() ? this.#failed(address, entry, counted) : { error: null, summary: null }),
    };
  }

  #failed(address: string, entry: Tracked, counted: boolean): FailedKey {
    const now = this.clock.now().getTime();
    entry.unreported++;
    if (counted) {
      entry.failures++;
      return { error: null, summary: entry.failures === this.policy.maxFailures ? this.#summaryIfDue(address, entry, now) : null };
    }
    return { error: tooManyAttempts(THROTTLED, entry.windowStart + this.policy.windowMs, now), summary: this.#summaryIfDue(address, entry, now) };
  }

  /** The address's entry for the window running now; a new window when its last one has passed. */
  #current(address: string, now: number): Tracked {
    const entry = this.#tracked.get(address);
    if (entry && now - entry.windowStart < this.policy.windowMs) return entry;
    // A new window; what was not yet reported goes into the next summary. Re-inserted so the map's
    // order stays the order of window starts, oldest first. Attempts still in flight keep the old
    // entry: their outcome no longer matters to this window.
    this.#tracked.delete(address);
    this.#makeRoom(now);
    const fresh = { windowStart: now, failures: 0, pending: 0, unreported: entry?.unreported ?? 0, reportedAt: entry?.reportedAt ?? null };
    this.#tracked.set(address, fresh);
    return fresh;
  }

  #summaryIfDue(address: string, entry: Tracked, now: number): GuessingSummary | null {
    if (entry.reportedAt !== null && now - entry.reportedAt < this.policy.windowMs) return null;
    const since = entry.reportedAt ?? entry.windowStart;
    const summary = {
      address,
      attempts: entry.unreported,
      periodSeconds: Math.max(1, Math.ceil((now - since) / 1000)),
      throttledUntil: new Date(entry.windowStart + this.policy.windowMs),
    };
    entry.unreported = 0;
    entry.reportedAt = now;
    return summary;
  }

  /** Forgets addresses whose window has passed, oldest first; when none has, the oldest one. */
  #makeRoom(now: number): void {
    if (this.#tracked.size < this.maxAddresses) return;
    for (const [address, entry] of this.#tracked) {
      if (this.#tracked.size < this.maxAddresses) return;
      if (now - entry.windowStart < this.policy.windowMs) break;
      this.#tracked.delete(address);
    }
    if (this.#tracked.size >= this.maxAddresses) this.#tracked.delete(this.#tracked.keys().next().value!);
  }
}

/** The source an attempt is counted for: an IPv4 address as is, an IPv6 address by its /64. */
export function addressGroup(ip: string): string {
  const address = ip.split('%')[0]!;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!isIPv6(address)) return address;
  const [head = '', tail] = address.split('::') as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])) : []);
  const left = groups(head);
  const right = groups(tail);
  const full = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${full.slice(0, 4).map((g) => Number.parseInt(g, 16).toString(16)).join(':')}::/64`;
}
