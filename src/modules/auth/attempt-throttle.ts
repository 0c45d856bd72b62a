// Throttling of failed sign-in attempts. One rule for both kinds: a source may fail `maxFailures` times
// within `windowMs`; after that it gets 429 TOO_MANY_ATTEMPTS with Retry-After until the oldest failure
// in the window has left it. Logins count failures per username in the database (auth.repo.ts); API
// keys count them per source address in memory (ApiKeyThrottle), bounded so that an attacker cannot
// grow it, and report each throttled address in summary, never per attempt.
import { isIPv6 } from 'node:net';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';

export interface ThrottlePolicy {
  readonly maxFailures: number;
  readonly windowMs: number;
}

/** Contract §1: 10 failed logins per username in 15 minutes. */
export const LOGIN_THROTTLE: ThrottlePolicy = { maxFailures: 10, windowMs: 15 * 60_000 };

/**
 * 30 failed API-key attempts per address in 5 minutes. A misconfigured agent with an old key retries
 * with a back-off that reaches once a minute (about 10 failures in its first 5 minutes), so even three
 * of them behind one NAT stay under it; a guesser at 1,200/s is stopped after 25 ms and then gets 30
 * tries per 5 minutes (a key has ≥ 190 random bits, so that is no chance at all).
 */
export const API_KEY_THROTTLE: ThrottlePolicy = { maxFailures: 30, windowMs: 5 * 60_000 };

/** The 429 for a source that has used up its failures (`oldest` = first failure in the window), or null. */
export function tooManyAttempts(policy: ThrottlePolicy, failures: { count: number; oldest: Date | null }, now: Date, message: string): AppError | null {
  if (failures.count < policy.maxFailures) return null;
  const freeAt = (failures.oldest?.getTime() ?? now.getTime()) + policy.windowMs;
  const retryAfter = Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000));
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
  /** Attempts (failed, or refused while throttled) not yet in a summary. */
  unreported: number;
  /** When the last summary of this address was made; null before the first. */
  reportedAt: number | null;
}

/** Addresses tracked at once; beyond it the oldest are forgotten (about 100 bytes each). */
export const MAX_TRACKED_ADDRESSES = 10_000;

/**
 * Failed API-key attempts per source address. Every request with a key from a throttled address is
 * refused without checking the key, a valid one included: an attacker holding one valid key must not be
 * able to reset its count, and a success therefore clears nothing. Summaries come when an address
 * crosses the limit and then at most once per window while it goes on.
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

  /** The 429 for a throttled address (and a summary when one is due), or null when it may try. */
  refuse(address: string): { error: AppError; summary: GuessingSummary | null } | null {
    const now = this.clock.now().getTime();
    const entry = this.#tracked.get(address);
    if (!entry || now - entry.windowStart >= this.policy.windowMs) return null;
    const error = tooManyAttempts(this.policy, { count: entry.failures, oldest: new Date(entry.windowStart) }, new Date(now), 'Too many failed API-key attempts from this address; try again later');
    if (!error) return null;
    entry.unreported++;
    return { error, summary: this.#summaryIfDue(address, entry, now) };
  }

  /** Counts a wrong or empty key; returns a summary when this failure made the address cross the limit. */
  fail(address: string): GuessingSummary | null {
    const now = this.clock.now().getTime();
    let entry = this.#tracked.get(address);
    if (!entry || now - entry.windowStart >= this.policy.windowMs) {
      // A new window; what was not yet reported goes into the next summary. Re-inserted so the map's
      // order stays the order of window starts, oldest first.
      this.#tracked.delete(address);
      this.#makeRoom(now);
      entry = { windowStart: now, failures: 0, unreported: entry?.unreported ?? 0, reportedAt: entry?.reportedAt ?? null };
      this.#tracked.set(address, entry);
    }
    entry.failures++;
    entry.unreported++;
    return entry.failures === this.policy.maxFailures ? this.#summaryIfDue(address, entry, now) : null;
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
