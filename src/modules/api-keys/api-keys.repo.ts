// All SQL of API keys.
import type { Kysely } from 'kysely';
import { keyColumn, keyset, keysetPage, toPage } from '../../db/keyset.js';
import type { Database, Permission } from '../../db/schema.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import type { CustomerScope } from '../auth/caller.js';

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

const BY_ID = keyset([keyColumn('id', 'int4')]);

/** Keys in the scope (a customer's, or all), oldest first. */
export async function listApiKeys(db: Kysely<Database>, scope: CustomerScope, page: PageRequest): Promise<Page<ApiKeyRow>> {
  const query = db
    .selectFrom('api_keys')
    .select(PUBLIC_COLUMNS)
    .$if(scope !== null, (q) => q.where('customer_id', '=', scope));
  return toPage(await keysetPage(query, BY_ID, page).execute(), page.limit);
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
