// All SQL of users.
import { sql, type Kysely, type Selectable } from 'kysely';
import { keyColumn, keyset, keysetPage, toPage } from '../../db/keyset.js';
import type { Database, UsersTable } from '../../db/schema.js';
import type { Page, PageRequest } from '../../platform/paging.js';

export type UserRow = Selectable<UsersTable>;

/** By username ignoring case (unique that way), then id. */
const BY_USERNAME = keyset([keyColumn(sql`lower(username)`, 'text'), keyColumn('id', 'int4')]);

export async function listUsers(db: Kysely<Database>, page: PageRequest): Promise<Page<UserRow>> {
  return toPage(await keysetPage(db.selectFrom('users').selectAll(), BY_USERNAME, page).execute(), page.limit);
}

export function findUser(db: Kysely<Database>, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Usernames are unique regardless of case, and found regardless of case. */
export function findUserByName(db: Kysely<Database>, username: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(username)`, '=', username.toLowerCase())
    .executeTakeFirst();
}

export function insertUser(db: Kysely<Database>, values: { username: string; password_hash: string }): Promise<UserRow> {
  return db.insertInto('users').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function countUsers(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return row.n;
}

/** Sets a new password and ends every session of the user (token version + 1). */
export async function setPassword(db: Kysely<Database>, id: number, passwordHash: string): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set((eb) => ({ password_hash: passwordHash, token_version: eb('token_version', '+', 1) }))
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Deletes a user unless it is the last one, in one transaction, so two parallel deletes cannot remove
 *  the last two users. */
export async function deleteUserUnlessLast(db: Kysely<Database>, id: number): Promise<'deleted' | 'last' | 'missing'> {
  return db.transaction().execute(async (trx) => {
    // Locking all user rows serialises concurrent deletes on PostgreSQL.
    const ids = await trx.selectFrom('users').select('id').forUpdate().execute();
    if (!ids.some((u) => u.id === id)) return 'missing';
    if (ids.length <= 1) return 'last';
    await trx.deleteFrom('users').where('id', '=', id).execute();
    return 'deleted';
  });
}

export async function touchLastLogin(db: Kysely<Database>, id: number, at: Date): Promise<void> {
  await db.updateTable('users').set({ last_login_at: at }).where('id', '=', id).execute();
}

export async function bumpTokenVersion(db: Kysely<Database>, id: number): Promise<void> {
  await db
    .updateTable('users')
    .set((eb) => ({ token_version: eb('token_version', '+', 1) }))
    .where('id', '=', id)
    .execute();
}
