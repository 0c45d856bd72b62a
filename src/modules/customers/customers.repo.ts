// All SQL of customers.
import type { Kysely } from 'kysely';
import { keyColumn, keyset, keysetPage, toPage } from '../../db/keyset.js';
import type { Database } from '../../db/schema.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { inScopeSql, type CustomerScope } from '../auth/caller.js';

export interface CustomerRow {
  id: number;
  number: string;
  name: string;
  created_at: Date;
}

/** What a customer row reads as (not name_key, the database's sort key for its name). */
const CUSTOMER_COLUMNS = ['id', 'number', 'name', 'created_at'] as const;

/** By number (as text), then id. */
const BY_NUMBER = keyset([keyColumn('number', 'text'), keyColumn('id', 'int4')]);

export async function listCustomers(db: Kysely<Database>, scope: CustomerScope, page: PageRequest): Promise<Page<CustomerRow>> {
  const query = db
    .selectFrom('customers')
    .select(CUSTOMER_COLUMNS)
    .$if(scope !== null, (q) => q.where(inScopeSql('id', scope!)));
  return toPage(await keysetPage(query, BY_NUMBER, page).execute(), page.limit);
}

export function findCustomer(db: Kysely<Database>, id: number): Promise<CustomerRow | undefined> {
  return db.selectFrom('customers').select(CUSTOMER_COLUMNS).where('id', '=', id).executeTakeFirst();
}

/** Which of the ids name a customer. */
export async function existingCustomerIds(db: Kysely<Database>, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  return (await db.selectFrom('customers').select('id').where('id', 'in', [...ids]).execute()).map((r) => r.id);
}

export function insertCustomer(db: Kysely<Database>, values: { number: string; name: string }): Promise<CustomerRow> {
  return db.insertInto('customers').values(values).returning(CUSTOMER_COLUMNS).executeTakeFirstOrThrow();
}

export function updateCustomer(
  db: Kysely<Database>,
  id: number,
  values: { number?: string; name?: string },
): Promise<CustomerRow | undefined> {
  return db.updateTable('customers').set(values).where('id', '=', id).returning(CUSTOMER_COLUMNS).executeTakeFirst();
}

/** Its API keys go with it (foreign key cascade); its agents are unassigned by theirs. */
export async function deleteCustomer(db: Kysely<Database>, id: number): Promise<void> {
  await db.deleteFrom('customers').where('id', '=', id).execute();
}
