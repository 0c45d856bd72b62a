// All SQL of server settings (key/value rows).
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

export async function readSettings(db: Kysely<Database>): Promise<Map<string, string>> {
  const rows = await db.selectFrom('settings').select(['key', 'value']).execute();
  return new Map(rows.map((r) => [r.key, r.value]));
}

/** Writes the given values (null deletes the key) in one transaction. */
export async function writeSettings(db: Kysely<Database>, values: Record<string, string | null>, at: Date): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const [key, value] of Object.entries(values)) {
      if (value === null) {
        await trx.deleteFrom('settings').where('key', '=', key).execute();
      } else {
        await trx
          .insertInto('settings')
          .values({ key, value, updated_at: at })
          .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: at }))
          .execute();
      }
    }
  });
}
