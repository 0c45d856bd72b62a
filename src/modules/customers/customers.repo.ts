// All SQL of customers.
import type { Kysely } from 'kysely';
import type { CustomerScope } from '../auth/caller.js';
import type { Database } from '../../db/schema.js';

export interface CustomerRow {
  id: number;
  number: string;
  name: string;
  created_at: Date;
}

export function listCustomers(db: Kysely<Database>, scope: CustomerScope): Promise<CustomerRow[]> {
  return db
    .selectFrom('customers')
    .selectAll()
    .$if(scope !== null, (q) => q.where('id', '=', scope))
    .orderBy('number')
    .orderBy('id')
    .execute();
}

export function findCustomer(db: Kysely<Database>, id: number): Promise<CustomerRow | undefined> {
  return db.selectFrom('customers').selectAll().where('id', '=', id).executeTakeFirst();
}

export function insertCustomer(db: Kysely<Database>, values: { number: string; name: string }): Promise<CustomerRow> {
  return db.insertInto('customers').values(values).returningAll().executeTakeFirstOrThrow();
}

export function updateCustomer(
  db: Kysely<Database>,
  id: number,
  values: { number?: string; name?: string },
): Promise<CustomerRow | undefined> {
  return db.updateTable('customers').set(values).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Its API keys go with it (foreign key cascade); its agents are unassigned by theirs. */
export async function deleteCustomer(db: Kysely<Database>, id: number): Promise<void> {
  await db.deleteFrom('customers').where('id', '=', id).execute();
}
