// All SQL of API keys.
import type { Kysely } from 'kysely';
import { keyColumn, keyset, keysetPage, toPage } from '../../db/keyset.js';
import type { Database, Permission } from '../../db/schema.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { inScopeSql, type CustomerScope } from '../auth/caller.js';

const PUBLIC_COLUMNS = ['id', 'name', 'key_hint', 'permissions', 'customer_id', 'created_at', 'expires_at', 'max_uses', 'uses'] as const;

export interface ApiKeyRow {
  id: number;
  name: string;
  key_hint: string;
  permissions: Permission;
  customer_id: number | null;
  created_at: Date;
  expires_at: Date | null;
  max_uses: number | null;
  uses: number;
}

export function insertApiKey(
  db: Kysely<Database>,
  values: {
    name: string;
    key_hash: string;
    key_hint: string;
    permissions: Permission;
    customer_id: number | null;
    expires_at: Date | null;
    max_uses: number | null;
  },
): Promise<ApiKeyRow> {
  return db.insertInto('api_keys').values(values).returning(PUBLIC_COLUMNS).executeTakeFirstOrThrow();
}

const BY_ID = keyset([keyColumn('id', 'int4')]);

/** Keys in the scope (a customer's, or all), oldest first. */
export async function listApiKeys(db: Kysely<Database>, scope: CustomerScope, page: PageRequest): Promise<Page<ApiKeyRow>> {
  const query = db
    .selectFrom('api_keys')
    .select(PUBLIC_COLUMNS)
    .$if(scope !== null, (q) => q.where(inScopeSql('customer_id', scope!)));
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

/**
 * Counts one use of a key, in one statement so concurrent installs cannot overrun `max_uses`; undefined
 * when the key is gone, expired or used up (nothing counted).
 */
export function countUse(db: Kysely<Database>, id: number, now: Date): Promise<ApiKeyRow | undefined> {
  return db
    .updateTable('api_keys')
    .set((eb) => ({ uses: eb('uses', '+', 1) }))
    .where('id', '=', id)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .where((eb) => eb.or([eb('max_uses', 'is', null), eb('uses', '<', eb.ref('max_uses'))]))
    .returning(PUBLIC_COLUMNS)
    .executeTakeFirst();
}
