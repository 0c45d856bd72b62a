// All SQL of the script library.
import { sql, type Kysely, type Selectable } from 'kysely';
import { keyColumn, keyset, keysetPage, toPage } from '../../db/keyset.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import type { Database, ScriptsTable } from '../../db/schema.js';

type Db = Kysely<Database>;

export type ScriptRow = Selectable<ScriptsTable>;
export type ScriptValues = Omit<ScriptRow, 'id' | 'created_at' | 'updated_at'>;

const encode = (v: ScriptValues) => ({ ...v, parameters: JSON.stringify(v.parameters), platforms: JSON.stringify(v.platforms) });

const BY_NAME = keyset([keyColumn(sql`lower(name)`, 'text'), keyColumn('id', 'int4')]);

export async function listScripts(db: Db, page: PageRequest): Promise<Page<ScriptRow>> {
  return toPage(await keysetPage(db.selectFrom('scripts').selectAll(), BY_NAME, page).execute(), page.limit);
}

export function findScript(db: Db, id: number): Promise<ScriptRow | undefined> {
  return db.selectFrom('scripts').selectAll().where('id', '=', id).executeTakeFirst();
}

export function insertScript(db: Db, values: ScriptValues, now: Date): Promise<ScriptRow> {
  return db
    .insertInto('scripts')
    .values({ ...encode(values), created_at: now, updated_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateScript(db: Db, id: number, values: ScriptValues, now: Date): Promise<ScriptRow | undefined> {
  return db
    .updateTable('scripts')
    .set({ ...encode(values), updated_at: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteScript(db: Db, id: number): Promise<boolean> {
  const result = await db.deleteFrom('scripts').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
