// All SQL of sign-in sessions (issue 35, Build 4): one row per signed-in device, named by the `sid` of
// its tokens. A token whose session row is gone is refused, so ending a session takes effect at once.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, UserRole, UserSessionsTable } from '../../db/schema.js';

type Db = Kysely<Database>;

export type SessionRow = Selectable<UserSessionsTable>;

/** The user behind a live session, with what a request needs: role, customer set, token version. */
export interface SessionUser {
  id: number;
  username: string;
  role: UserRole;
  all_customers: boolean;
  token_version: number;
  customer_ids: number[];
  last_used_at: Date;
}

export async function insertSession(db: Db, row: SessionRow): Promise<void> {
  await db.insertInto('user_sessions').values(row).execute();
}

/** One query per request: the session, its user and the user's customers. */
export function findSessionUser(db: Db, sessionId: string, userId: number, now: Date): Promise<SessionUser | undefined> {
  return db
    .selectFrom('user_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['u.id', 'u.username', 'u.role', 'u.all_customers', 'u.token_version', 's.last_used_at'])
    .select(sql<number[]>`array(select uc.customer_id from user_customers as uc where uc.user_id = u.id order by uc.customer_id)`.as('customer_ids'))
    .where('s.id', '=', sessionId)
    .where('s.user_id', '=', userId)
    .where('s.expires_at', '>', now)
    .executeTakeFirst();
}

export async function touchSession(db: Db, sessionId: string, at: Date): Promise<void> {
  await db.updateTable('user_sessions').set({ last_used_at: at }).where('id', '=', sessionId).execute();
}

export function listSessions(db: Db, userId: number, now: Date): Promise<SessionRow[]> {
  return db
    .selectFrom('user_sessions')
    .selectAll()
    .where('user_id', '=', userId)
    .where('expires_at', '>', now)
    .orderBy('last_used_at', 'desc')
    .orderBy('id')
    .execute();
}

/** Ends one session of the user; false when the user has no such session. */
export async function deleteSession(db: Db, userId: number, sessionId: string): Promise<boolean> {
  const result = await db.deleteFrom('user_sessions').where('id', '=', sessionId).where('user_id', '=', userId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Ends every session of the user and bumps the token version, so no token of theirs works any more. */
export async function endAllSessions(db: Db, userId: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('user_sessions').where('user_id', '=', userId).execute();
    await trx
      .updateTable('users')
      .set((eb) => ({ token_version: eb('token_version', '+', 1) }))
      .where('id', '=', userId)
      .execute();
  });
}

export async function deleteExpiredSessions(db: Db, userId: number, now: Date): Promise<void> {
  await db.deleteFrom('user_sessions').where('user_id', '=', userId).where('expires_at', '<=', now).execute();
}
