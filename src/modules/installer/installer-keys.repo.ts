// All SQL of per-customer installer keys: the sealed key and its API key row, made and replaced under
// a lock on the customer, so concurrent first downloads make one key.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

type Db = Kysely<Database>;

export interface InstallerKeyRow {
  customer_id: number;
  api_key_id: number;
  sealed_key: string;
  key_hint: string;
  created_at: Date;
}

export function findInstallerKey(db: Db, customerId: number): Promise<InstallerKeyRow | undefined> {
  return db
    .selectFrom('customer_installer_keys as i')
    .innerJoin('api_keys as k', 'k.id', 'i.api_key_id')
    .select(['i.customer_id', 'i.api_key_id', 'i.sealed_key', 'k.key_hint', 'i.created_at'])
    .where('i.customer_id', '=', customerId)
    .executeTakeFirst();
}

/** Locks the customer's row until the transaction ends; false when there is no such customer. */
export async function lockCustomer(trx: Db, customerId: number): Promise<boolean> {
  const row = await trx.selectFrom('customers').select('id').where('id', '=', customerId).forUpdate().executeTakeFirst();
  return row !== undefined;
}

/** Makes `key` (already hashed, hinted) an agent key of the customer and its installer key. */
export async function insertInstallerKey(
  trx: Db,
  values: { customerId: number; name: string; keyHash: string; keyHint: string; sealedKey: string; createdAt: Date },
): Promise<InstallerKeyRow> {
  const apiKey = await trx
    .insertInto('api_keys')
    .values({ name: values.name, key_hash: values.keyHash, key_hint: values.keyHint, permissions: 'agent', customer_id: values.customerId, created_at: values.createdAt })
    .returning('id')
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('customer_installer_keys')
    .values({ customer_id: values.customerId, api_key_id: apiKey.id, sealed_key: values.sealedKey, created_at: values.createdAt })
    .onConflict((oc) => oc.column('customer_id').doUpdateSet({ api_key_id: apiKey.id, sealed_key: values.sealedKey, created_at: values.createdAt }))
    .execute();
  return { customer_id: values.customerId, api_key_id: apiKey.id, sealed_key: values.sealedKey, key_hint: values.keyHint, created_at: values.createdAt };
}

/** The previous installer key stays an ordinary agent key of the customer, under a name that says so. */
export async function renameApiKey(trx: Db, apiKeyId: number, name: string): Promise<void> {
  await trx.updateTable('api_keys').set({ name }).where('id', '=', apiKeyId).execute();
}
