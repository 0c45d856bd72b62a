// All SQL of users.
import { sql, type Kysely, type Selectable } from 'kysely';
import { keyColumn, keyset, keysetPage, toPage } from '../../db/keyset.js';
import type { Database, UserRole, UsersTable } from '../../db/schema.js';
import type { Page, PageRequest } from '../../platform/paging.js';

/** A user with the customers they are limited to (meaningful when all_customers is false). */
export type UserRow = Selectable<UsersTable> & { customer_ids: number[] };

const customerIds = sql<number[]>`array(select uc.customer_id from user_customers as uc where uc.user_id = users.id order by uc.customer_id)`.as('customer_ids');

/** By username ignoring case (unique that way), then id. */
const BY_USERNAME = keyset([keyColumn(sql`lower(username)`, 'text'), keyColumn('id', 'int4')]);

export async function listUsers(db: Kysely<Database>, page: PageRequest): Promise<Page<UserRow>> {
  return toPage(await keysetPage(db.selectFrom('users').selectAll().select(customerIds), BY_USERNAME, page).execute(), page.limit);
}

export function findUser(db: Kysely<Database>, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().select(customerIds).where('id', '=', id).executeTakeFirst();
}

/** Usernames are unique regardless of case, and found regardless of case. */
export function findUserByName(db: Kysely<Database>, username: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .select(customerIds)
    .where(sql<string>`lower(username)`, '=', username.toLowerCase())
    .executeTakeFirst();
}

export interface NewUser {
  username: string;
  password_hash: string;
  role: UserRole;
  /** Null: every customer. */
  customer_ids: readonly number[] | null;
}

/** Inserts the user and their customers together; a customer that does not exist fails it (FK). */
export async function insertUser(db: Kysely<Database>, values: NewUser): Promise<UserRow> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('users')
      .values({ username: values.username, password_hash: values.password_hash, role: values.role, all_customers: values.customer_ids === null })
      .returning('id')
      .executeTakeFirstOrThrow();
    await replaceCustomers(trx, row.id, values.customer_ids ?? []);
    return (await findUser(trx, row.id))!;
  });
}

async function replaceCustomers(db: Kysely<Database>, userId: number, customerIds: readonly number[]): Promise<void> {
  await db.deleteFrom('user_customers').where('user_id', '=', userId).execute();
  const unique = [...new Set(customerIds)];
  if (unique.length > 0) await db.insertInto('user_customers').values(unique.map((customer_id) => ({ user_id: userId, customer_id }))).execute();
}

/** Unscoped admins other than `exceptId`, counted with their rows locked (see changeAccess, deleteUserUnlessLast). */
async function otherFullAdmins(db: Kysely<Database>, exceptId: number): Promise<number> {
  const rows = await db.selectFrom('users').select(['id', 'role', 'all_customers']).forUpdate().execute();
  return rows.filter((u) => u.id !== exceptId && u.role === 'admin' && u.all_customers).length;
}

/**
 * Sets a user's role and customers and ends their sessions (their tokens carried the old rights).
 * Refused ('last_admin') when it would leave no admin with every customer: nobody could manage users.
 */
export async function changeAccess(
  db: Kysely<Database>,
  id: number,
  change: { role?: UserRole | undefined; customer_ids?: readonly number[] | null | undefined },
): Promise<UserRow | 'missing' | 'last_admin'> {
  return db.transaction().execute(async (trx) => {
    const others = await otherFullAdmins(trx, id);
    const user = await findUser(trx, id);
    if (!user) return 'missing';
    const role = change.role ?? user.role;
    const allCustomers = change.customer_ids === undefined ? user.all_customers : change.customer_ids === null;
    if (others === 0 && !(role === 'admin' && allCustomers)) return 'last_admin';
    await trx
      .updateTable('users')
      .set((eb) => ({ role, all_customers: allCustomers, token_version: eb('token_version', '+', 1) }))
      .where('id', '=', id)
      .execute();
    if (change.customer_ids !== undefined) await replaceCustomers(trx, id, change.customer_ids ?? []);
    await trx.deleteFrom('user_sessions').where('user_id', '=', id).execute();
    return (await findUser(trx, id))!;
  });
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
  await db.deleteFrom('user_sessions').where('user_id', '=', id).execute();
  return result.numUpdatedRows > 0n;
}

/** Deletes a user unless it is the last one, or the last admin with every customer, in one transaction,
 *  so two parallel deletes cannot remove the last two. */
export async function deleteUserUnlessLast(db: Kysely<Database>, id: number): Promise<'deleted' | 'last' | 'last_admin' | 'missing'> {
  return db.transaction().execute(async (trx) => {
    // Locking all user rows serialises concurrent deletes on PostgreSQL.
    const users = await trx.selectFrom('users').select(['id', 'role', 'all_customers']).forUpdate().execute();
    const user = users.find((u) => u.id === id);
    if (!user) return 'missing';
    if (users.length <= 1) return 'last';
    const fullAdmin = (u: (typeof users)[number]) => u.role === 'admin' && u.all_customers;
    if (fullAdmin(user) && !users.some((u) => u.id !== id && fullAdmin(u))) return 'last_admin';
    await trx.deleteFrom('users').where('id', '=', id).execute();
    return 'deleted';
  });
}

export async function touchLastLogin(db: Kysely<Database>, id: number, at: Date): Promise<void> {
  await db.updateTable('users').set({ last_login_at: at }).where('id', '=', id).execute();
}

