// All SQL of installer packages: one row per platform naming the ZIP in the blob store by its SHA-256.
import type { Kysely, Selectable } from 'kysely';
import type { Database, InstallersTable } from '../../db/schema.js';

type Db = Kysely<Database>;

export type InstallerRow = Selectable<InstallersTable>;

export function findInstaller(db: Db, platform: string): Promise<InstallerRow | undefined> {
  return db.selectFrom('installers').selectAll().where('platform', '=', platform).executeTakeFirst();
}

/** The platform's current package, locked until the transaction ends, so two uploads replace in turn. */
export async function lockInstaller(trx: Db, platform: string): Promise<InstallerRow | undefined> {
  return trx.selectFrom('installers').selectAll().where('platform', '=', platform).forUpdate().executeTakeFirst();
}

export function saveInstaller(trx: Db, row: InstallerRow): Promise<InstallerRow> {
  return trx
    .insertInto('installers')
    .values(row)
    .onConflict((oc) => oc.column('platform').doUpdateSet({ sha256: row.sha256, size: row.size, created_at: row.created_at }))
    .returningAll()
    .executeTakeFirstOrThrow();
}
