// All SQL of API keys.
import type { Kysely } from 'kysely';
import type { CustomerScope } from '../auth/caller.js';
import type { Database, Permission } from '../../db/schema.js';

const PUBLIC_COLUMNS = ['id', 'name', 'key_hint', 'permissions', 'customer_id', 'created_at'] as const;

export interface ApiKeyRow {
  id: number;
  name: string;
  key_hint: string;
  permissions: Permission;
  customer_id: number | null;
  created_at: Date;
}

export function insertApiKey(
  db: Kysely<Database>,
  values: { name: string; key_hash: string; key_hint: string; permissions: Permission; customer_id: number | null },
): Promise<ApiKeyRow> {
  return db.insertInto('api_keys').values(values).returning(PUBLIC_COLUMNS).executeTakeFirstOrThrow();
}

export function listApiKeys(db: Kysely<Database>, scope: CustomerScope): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .select(PUBLIC_COLUMNS)
    .$if(scope !== null, (q) => q.where('customer_id', '=', scope))
    .orderBy('id')
    .execute();
}

export function listApiKeysOfCustomer(db: Kysely<Database>, customerId: number): Promise<ApiKeyRow[]> {
  return db.selectFrom('api_keys').select(PUBLIC_COLUMNS).where('customer_id', '=', customerId).orderBy('id').execute();
}

export function findApiKey(db: Kysely<Database>, id: number): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').select(PUBLIC_COLUMNS).where('id', '=', id).executeTakeFirst();
}

export function findApiKeyByHash(db: Kysely<Database>, keyHash: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').select(PUBLIC_COLUMNS).where('key_hash', '=', keyHash).executeTakeFirst();
}

export async function deleteApiKey(db: Kysely<Database>, id: number): Promise<void> {
  await db.deleteFrom('api_keys').where('id', '=', id).execute();
}
