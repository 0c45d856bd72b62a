// Throttling of password sign-in (issue 57; NIST SP 800-63B §5.2.2). Failures are counted per
// (username, address), per address across usernames (password spraying), and per username across
// addresses (a high ceiling against distributed guessing). Each count is a leaky counter: one failure is
// forgotten per interval, and once a count reaches its limit each further failure makes the next attempt
// wait twice as long (1 minute doubling up to an hour), 429 with Retry-After meanwhile. No stranger can
// lock a user out: the user's own address has its own count, and the username's ceiling does not apply
// to an address the user signed in from with the right password in the last 90 days. Passkey and single
// sign-on never pass through here. Counters live in the database, so a cluster's instances share them.
// An attempt is counted before its password is checked, inside a transaction that holds the counters,
// so concurrent guesses cannot all slip under a limit; the right password gives it back.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { addressGroup, tooManyAttempts } from './attempt-throttle.js';
import * as repo from './login-throttle.repo.js';

export interface LoginPolicy {
  /** Failures (not yet forgotten) before the first wait. */
  readonly limit: number;
  /** One failure is forgotten per this interval. */
  readonly forgetEveryMs: number;
  /** The wait after the failure that reaches the limit; each further failure doubles it, up to maxWaitMs. */
  readonly firstWaitMs: number;
  readonly maxWaitMs: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * One username from one address: the contract's 10 failures, then 1, 2, 4 … 60 minutes between tries;
 * a guesser sustains about one a hour. The right password starts it again.
 */
export const PAIR_POLICY: LoginPolicy = { limit: 10, forgetEveryMs: HOUR, firstWaitMs: MINUTE, maxWaitMs: HOUR };
/**
 * One address across all usernames (spraying): 50, then about 12 an hour. An office behind one NAT
 * mistyping a few times an hour never gets near it; the right password gives back only its own attempt.
 */
export const ADDRESS_POLICY: LoginPolicy = { limit: 50, forgetEveryMs: 5 * MINUTE, firstWaitMs: MINUTE, maxWaitMs: HOUR };
/**
 * One username across all addresses: NIST's ceiling of 100 failures in a row, then about one an hour,
 * for addresses the user has not signed in from. The right password starts it again.
 */
export const USERNAME_POLICY: LoginPolicy = { limit: 100, forgetEveryMs: HOUR, firstWaitMs: MINUTE, maxWaitMs: HOUR };
/** How long an address where the user gave the right password stays theirs (exempt from the ceiling). */
export const KNOWN_ADDRESS_MS = 90 * 24 * HOUR;

type Scope = 'pair' | 'address' | 'username';

interface ScopeRules {
  policy: LoginPolicy;
  key(username: string, address: string): repo.CounterKey;
  refusal: string;
  /** The counter after the right password. */
  onSuccess(state: repo.CounterState, now: Date): repo.CounterState;
}

const SCOPES: Record<Scope, ScopeRules> = {
  pair: {
    policy: PAIR_POLICY,
    key: (username, address) => ({ username, address }),
    refusal: 'Too many failed sign-ins for this user from this address; try again later',
    onSuccess: (state, now) => cleared(state, now, now),
  },
  address: {
    policy: ADDRESS_POLICY,
    key: (_, address) => ({ username: '', address }),
    refusal: 'Too many failed sign-ins from this address; try again later',
    // Not cleared: a guesser holding one account of their own must not reset the count with it.
    onSuccess: (state, now) => withRefund(state, ADDRESS_POLICY, now),
  },
  username: {
    policy: USERNAME_POLICY,
    key: (username) => ({ username, address: '' }),
    refusal: 'Too many failed sign-ins for this user; try again later, from an address you signed in from before, or with a passkey or single sign-on',
    onSuccess: (state, now) => cleared(state, now, null),
  },
};
const SCOPE_NAMES = Object.keys(SCOPES) as Scope[];
type Keys = Record<Scope, repo.CounterKey>;

/** The counter as it stands at `now`: one failure forgotten per interval since `leak_from`. */
export function leaked(state: repo.CounterState, policy: LoginPolicy, now: Date): { failures: number; leakFrom: Date } {
  const steps = Math.max(0, Math.floor((now.getTime() - state.leak_from.getTime()) / policy.forgetEveryMs));
  const failures = Math.max(0, state.failures - steps);
  // An empty counter leaks nothing: it starts afresh with its next failure.
  const leakFrom = failures === 0 ? now : new Date(state.leak_from.getTime() + steps * policy.forgetEveryMs);
  return { failures, leakFrom };
}

/** The wait after a count of `failures` (none below the limit). */
export function waitAfter(failures: number, policy: LoginPolicy): number {
  if (failures < policy.limit) return 0;
  return Math.min(policy.maxWaitMs, policy.firstWaitMs * 2 ** Math.min(30, failures - policy.limit));
}

function withCount(state: repo.CounterState, policy: LoginPolicy, failures: number, leakFrom: Date, blockedUntil: Date | null): repo.CounterState {
  return { ...state, failures, leak_from: leakFrom, blocked_until: blockedUntil, forgotten_at: new Date(leakFrom.getTime() + failures * policy.forgetEveryMs) };
}

/** The counter with one more failure, and the wait it sets (never shortening one that runs). */
export function withFailure(state: repo.CounterState, policy: LoginPolicy, now: Date): repo.CounterState {
  const { failures, leakFrom } = leaked(state, policy, now);
  const wait = waitAfter(failures + 1, policy);
  const until = wait > 0 ? new Date(now.getTime() + wait) : null;
  const later = state.blocked_until && (!until || state.blocked_until > until) ? state.blocked_until : until;
  return withCount(state, policy, failures + 1, leakFrom, later);
}

/** The counter with one failure given back (an attempt that turned out to be the right password). */
export function withRefund(state: repo.CounterState, policy: LoginPolicy, now: Date): repo.CounterState {
  const { failures, leakFrom } = leaked(state, policy, now);
  const back = Math.max(0, failures - 1);
  // No wait ran when this attempt was let in, and none let another in since: a running wait is its own.
  return withCount(state, policy, back, back === 0 ? now : leakFrom, null);
}

function cleared(state: repo.CounterState, now: Date, succeededAt: Date | null): repo.CounterState {
  return { failures: 0, leak_from: now, blocked_until: null, succeeded_at: succeededAt ?? state.succeeded_at, forgotten_at: now };
}

/** A password sign-in attempt, counted as a failure until it proves right. */
export interface LoginAttempt {
  /** The right password: its (username, address) and username counts start again; the address gets this attempt back. */
  succeeded(): Promise<void>;
  /** A wrong password (or an unknown user): the attempt stays counted. */
  failed(): Promise<void>;
}

export class LoginThrottle {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  /** Counts an attempt of `username` (lower-cased) from `ip`, or throws 429 while a count that applies makes it wait. */
  async begin(username: string, ip: string): Promise<LoginAttempt> {
    const address = addressGroup(ip);
    const keys = Object.fromEntries(SCOPE_NAMES.map((scope) => [scope, SCOPES[scope].key(username, address)])) as Keys;
    const now = this.clock.now();
    const refused = await this.db.transaction().execute(async (trx) => {
      const rows = await this.#lock(trx, keys, now);
      const known = rows.pair.succeeded_at !== null && now.getTime() - rows.pair.succeeded_at.getTime() < KNOWN_ADDRESS_MS;
      const waiting = SCOPE_NAMES.filter((scope) => (scope !== 'username' || !known) && rows[scope].blocked_until !== null && rows[scope].blocked_until > now);
      if (waiting.length > 0) {
        const longest = waiting.reduce((a, b) => (rows[b].blocked_until! > rows[a].blocked_until! ? b : a));
        return { scope: longest, until: rows[longest].blocked_until! };
      }
      for (const scope of SCOPE_NAMES) await repo.saveCounter(trx, keys[scope], withFailure(rows[scope], SCOPES[scope].policy, now));
      return null;
    });
    if (refused) throw tooManyAttempts(SCOPES[refused.scope].refusal, refused.until.getTime(), now.getTime());
    return {
      succeeded: () => this.#succeeded(keys),
      // A failure is when made-up usernames add rows; it also clears away those with nothing left to say.
      failed: () => {
        const at = this.clock.now();
        return repo.pruneCounters(this.db, at, new Date(at.getTime() - KNOWN_ADDRESS_MS));
      },
    };
  }

  async #succeeded(keys: Keys): Promise<void> {
    const now = this.clock.now();
    await this.db.transaction().execute(async (trx) => {
      const rows = await this.#lock(trx, keys, now);
      for (const scope of SCOPE_NAMES) await repo.saveCounter(trx, keys[scope], SCOPES[scope].onSuccess(rows[scope], now));
    });
  }

  async #lock(trx: Kysely<Database>, keys: Keys, now: Date): Promise<Record<Scope, repo.CounterRow>> {
    const rows = await repo.lockCounters(trx, Object.values(keys), now);
    const find = (scope: Scope) => rows.find((r) => r.username === keys[scope].username && r.address === keys[scope].address)!;
    return { pair: find('pair'), address: find('address'), username: find('username') };
  }
}
