// All SQL of sign-in: pending two-factor logins, TOTP state (throttling: login-throttle.repo.ts).
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

type Db = Kysely<Database>;

export async function insertPendingLogin(db: Db, values: { id: string; user_id: number; expires_at: Date }): Promise<void> {
  await db.insertInto('pending_logins').values(values).execute();
}

export function findPendingLogin(db: Db, id: string) {
  return db.selectFrom('pending_logins').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function countWrongCode(db: Db, id: string): Promise<void> {
  await db
    .updateTable('pending_logins')
    .set((eb) => ({ failed_attempts: eb('failed_attempts', '+', 1) }))
    .where('id', '=', id)
    .execute();
}

/** Marks the pending login used; false when it was already used, expired or out of attempts. */
export async function consumePendingLogin(db: Db, id: string, now: Date, maxAttempts: number): Promise<boolean> {
  const row = await db
    .updateTable('pending_logins')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .where('failed_attempts', '<', maxAttempts)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function deleteExpiredPendingLogins(db: Db, before: Date): Promise<void> {
  await db.deleteFrom('pending_logins').where('expires_at', '<', before).execute();
}

/** Accepts a TOTP time step once: only a step later than the last accepted one is recorded. */
export async function acceptTotpStep(db: Db, userId: number, step: number): Promise<boolean> {
  const row = await db
    .updateTable('users')
    .set({ totp_last_step: step })
    .where('id', '=', userId)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function setPendingTotpSecret(db: Db, userId: number, sealedSecret: string): Promise<void> {
  await db.updateTable('users').set({ totp_pending_secret: sealedSecret }).where('id', '=', userId).execute();
}

export async function enableTotp(db: Db, userId: number, sealedSecret: string, step: number): Promise<void> {
  await db
    .updateTable('users')
    .set({ totp_enabled: true, totp_secret: sealedSecret, totp_pending_secret: null, totp_last_step: step })
    .where('id', '=', userId)
    .execute();
}

/** Turns TOTP off and ends every session of the user. */
export async function disableTotp(db: Db, userId: number): Promise<void> {
  await db.deleteFrom('user_sessions').where('user_id', '=', userId).execute();
  await db
    .updateTable('users')
    .set((eb) => ({
      totp_enabled: false,
      totp_secret: null,
      totp_pending_secret: null,
      token_version: eb('token_version', '+', 1),
    }))
    .where('id', '=', userId)
    .execute();
}
