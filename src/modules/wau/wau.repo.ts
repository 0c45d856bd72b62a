// All SQL of winget-autoupdate rules: the rules of a customer, the package ids of one action for the
// lists, and when the customer's rules last changed.
import { sql, type Kysely, type Selectable } from 'kysely';
import { keyColumn, keyset, keysetPage, toPage } from '../../db/keyset.js';
import type { Database, WauAction, WauRulesTable } from '../../db/schema.js';
import type { Page, PageRequest } from '../../platform/paging.js';

type Db = Kysely<Database>;

export type WauRuleRow = Selectable<WauRulesTable>;

/** By package id in byte order (as in the list files), then id. */
const BY_PACKAGE_ID = keyset([keyColumn(sql`package_id collate "C"`, 'text'), keyColumn('id', 'int8')]);

export async function listRules(db: Db, customerId: number, page: PageRequest): Promise<Page<WauRuleRow>> {
  const query = db.selectFrom('wau_rules').selectAll().where('customer_id', '=', customerId);
  return toPage(await keysetPage(query, BY_PACKAGE_ID, page).execute(), page.limit);
}

/** Throws the database's unique violation when the customer has a rule for the package (any case). */
export function insertRule(
  db: Db,
  values: { customer_id: number; action: WauAction; package_id: string; display_name: string; created_at: Date },
): Promise<WauRuleRow> {
  return db.insertInto('wau_rules').values(values).returningAll().executeTakeFirstOrThrow();
}

/** Deletes the customer's rules matching every given criterion (package ids compare ignoring case). */
export async function deleteRules(db: Db, customerId: number, match: { id?: number; packageId?: string }): Promise<number> {
  const result = await db
    .deleteFrom('wau_rules')
    .where('customer_id', '=', customerId)
    .$if(match.id !== undefined, (q) => q.where('id', '=', match.id!))
    .$if(match.packageId !== undefined, (q) => q.where(sql`lower(package_id)`, '=', match.packageId!.toLowerCase()))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The package ids of one action, in byte order. */
export async function listPackageIds(db: Db, customerId: number, action: WauAction): Promise<string[]> {
  const rows = await db
    .selectFrom('wau_rules')
    .select('package_id')
    .where('customer_id', '=', customerId)
    .where('action', '=', action)
    .orderBy(sql`package_id collate "C"`)
    .execute();
  return rows.map((r) => r.package_id);
}

/**
 * Records a change of the customer's rules at `now`, as it is (the lists' validators round it, see
 * list-validators.ts). The recorded time never goes back, should the clock step back. Call last in the
 * change's transaction, so the time is as close to the commit as it can be; the upsert's row lock orders
 * concurrent changes of one customer. A customer deleted meanwhile records nothing.
 */
export async function recordListChange(db: Db, customerId: number, now: Date): Promise<void> {
  await sql`
    insert into wau_list_changes (customer_id, changed_at)
    select c.id, ${now}::timestamptz from customers c where c.id = ${customerId}
    on conflict (customer_id) do update set changed_at = greatest(excluded.changed_at, wau_list_changes.changed_at)`.execute(db);
}

/**
 * The customer's latest change time, its row locked (FOR SHARE) until the caller's transaction ends: a
 * change still committing (its upsert holds the row) is waited for, so a list read next includes every
 * change whose time was recorded before it. A customer without a row gets one holding its creation time
 * (once; the insert waits for a first change being inserted). Undefined when the customer is gone.
 */
export async function lockListChange(trx: Db, customerId: number): Promise<Date | undefined> {
  const find = () => trx.selectFrom('wau_list_changes').select('changed_at').where('customer_id', '=', customerId).forShare().executeTakeFirst();
  const row = await find();
  if (row) return row.changed_at;
  await sql`
    insert into wau_list_changes (customer_id, changed_at)
    select c.id, c.created_at from customers c where c.id = ${customerId}
    on conflict (customer_id) do nothing`.execute(trx);
  return (await find())?.changed_at;
}
