// All SQL of password sign-in throttling: the leaky failure counters of login-throttle.ts, one row each.
import type { Kysely, Selectable } from 'kysely';
import type { Database, LoginThrottleTable } from '../../db/schema.js';

type Db = Kysely<Database>;

/** Which counter: (username, address), an address's own (username ''), a username's own (address ''). */
export interface CounterKey {
  username: string;
  address: string;
}

export type CounterRow = Selectable<LoginThrottleTable>;

/** What a counter holds (its key aside). */
export type CounterState = Omit<CounterRow, 'username' | 'address'>;

/**
 * The counters, created empty where missing and locked until the transaction ends, so the attempts on
 * one counter take their turns (the count cannot be read by two attempts at once and both slip under
 * the limit). Always in the same order: two attempts share at most one counter, so they cannot deadlock.
 */
export async function lockCounters(trx: Db, keys: readonly CounterKey[], now: Date): Promise<CounterRow[]> {
  await trx
    .insertInto('login_throttle')
    .values(keys.map((k) => ({ ...k, leak_from: now, forgotten_at: now })))
    .onConflict((oc) => oc.columns(['username', 'address']).doNothing())
    .execute();
  return trx
    .selectFrom('login_throttle')
    .selectAll()
    .where((eb) => eb.or(keys.map((k) => eb.and([eb('username', '=', k.username), eb('address', '=', k.address)]))))
    .orderBy('username')
    .orderBy('address')
    .forUpdate()
    .execute();
}

export async function saveCounter(trx: Db, key: CounterKey, state: CounterState): Promise<void> {
  await trx.updateTable('login_throttle').set(state).where('username', '=', key.username).where('address', '=', key.address).execute();
}

/**
 * Deletes counters with nothing left to remember: every failure forgotten, no wait running, and no
 * right password from there since `knownSince` (which makes an address known for its user).
 */
export async function pruneCounters(db: Db, now: Date, knownSince: Date): Promise<void> {
  await db
    .deleteFrom('login_throttle')
    .where('forgotten_at', '<=', now)
    .where((eb) => eb.or([eb('blocked_until', 'is', null), eb('blocked_until', '<=', now)]))
    .where((eb) => eb.or([eb('succeeded_at', 'is', null), eb('succeeded_at', '<', knownSince)]))
    .execute();
}
