// All SQL of passkeys: the credentials users register and the single-use ceremony challenges.
import type { Kysely, Selectable } from 'kysely';
import type { ChallengePurpose, Database, PasskeysTable, WebauthnChallengesTable } from '../../db/schema.js';

type Db = Kysely<Database>;
export type PasskeyRow = Selectable<PasskeysTable>;
export type ChallengeRow = Selectable<WebauthnChallengesTable>;

export function listPasskeys(db: Db, userId: number): Promise<PasskeyRow[]> {
  return db.selectFrom('passkeys').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
}

export async function countPasskeys(db: Db, userId: number): Promise<number> {
  const row = await db.selectFrom('passkeys').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
  return Number(row.n);
}

export function findByCredentialId(db: Db, credentialId: string): Promise<PasskeyRow | undefined> {
  return db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
}

/** Inserts a passkey; undefined when its credential id is already registered (to anyone). */
export async function insertPasskey(
  db: Db,
  values: { user_id: number; credential_id: string; public_key: string; counter: number; transports: string; name: string; created_at: Date },
): Promise<PasskeyRow | undefined> {
  return db
    .insertInto('passkeys')
    .values(values)
    .onConflict((oc) => oc.column('credential_id').doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function renamePasskey(db: Db, userId: number, id: number, name: string): Promise<PasskeyRow | undefined> {
  return db.updateTable('passkeys').set({ name }).where('id', '=', id).where('user_id', '=', userId).returningAll().executeTakeFirst();
}

export async function deletePasskey(db: Db, userId: number, id: number): Promise<boolean> {
  const row = await db.deleteFrom('passkeys').where('id', '=', id).where('user_id', '=', userId).returning('id').executeTakeFirst();
  return row !== undefined;
}

/**
 * Records a use: the new counter and the time, only if the counter is still what was verified against.
 * False when another sign-in with the same passkey got there first (a cloned authenticator racing).
 */
export async function recordUse(db: Db, id: number, expectedCounter: number, newCounter: number, at: Date): Promise<boolean> {
  const row = await db
    .updateTable('passkeys')
    .set({ counter: newCounter, last_used_at: at })
    .where('id', '=', id)
    .where('counter', '=', expectedCounter)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Stores a new challenge, after forgetting expired ones and those it replaces (same user or pending login and purpose). */
export async function insertChallenge(db: Db, values: ChallengeRow, now: Date): Promise<void> {
  await db.deleteFrom('webauthn_challenges').where('expires_at', '<=', now).execute();
  let replaced = db.deleteFrom('webauthn_challenges').where('purpose', '=', values.purpose);
  if (values.pending_id !== null) replaced = replaced.where('pending_id', '=', values.pending_id);
  else if (values.user_id !== null) replaced = replaced.where('user_id', '=', values.user_id);
  // A passwordless challenge belongs to no one yet: it replaces nothing.
  if (values.pending_id !== null || values.user_id !== null) await replaced.execute();
  await db.insertInto('webauthn_challenges').values(values).execute();
}

/** Live passwordless challenges, in all and from one address (to bound what anonymous callers can store). */
export async function countOpenPasswordless(db: Db, ip: string, now: Date): Promise<{ all: number; fromIp: number }> {
  const row = await db
    .selectFrom('webauthn_challenges')
    .select((eb) => [
      eb.fn.countAll<number>().as('all'),
      eb.fn.sum<number>(eb.case().when('ip', '=', ip).then(1).else(0).end()).as('from_ip'),
    ])
    .where('purpose', '=', 'passwordless')
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return { all: Number(row.all), fromIp: Number(row.from_ip ?? 0) };
}

/** Whose challenge it must be: the registering user's, a pending login's, or no one's (passwordless). */
export type ChallengeOwner = { user_id: number } | { pending_id: string } | null;

/**
 * Takes a challenge, deleting it so it is used at most once; undefined when unknown, expired, of another
 * purpose or another owner (then it stays for its owner).
 */
export async function takeChallenge(db: Db, challenge: string, purpose: ChallengePurpose, owner: ChallengeOwner, now: Date): Promise<ChallengeRow | undefined> {
  let query = db.deleteFrom('webauthn_challenges').where('challenge', '=', challenge).where('purpose', '=', purpose).where('expires_at', '>', now);
  if (owner && 'user_id' in owner) query = query.where('user_id', '=', owner.user_id);
  if (owner && 'pending_id' in owner) query = query.where('pending_id', '=', owner.pending_id);
  return query.returningAll().executeTakeFirst();
}

/** Removes every passkey of a user; returns how many there were. */
export async function deleteAllPasskeys(db: Db, userId: number): Promise<number> {
  const rows = await db.deleteFrom('passkeys').where('user_id', '=', userId).returning('id').execute();
  return rows.length;
}
