// All SQL of the shared blob store (cluster mode): blobs cut into chunks in `blob_chunks`, and a
// `blobs` row per complete blob. Writers insert the chunks and then the row in one transaction.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

type Db = Kysely<Database>;

/** The size of a complete blob, or undefined when there is none by that hash. */
export async function findBlob(db: Db, sha256: string): Promise<{ size: number } | undefined> {
  return db.selectFrom('blobs').select('size').where('sha256', '=', sha256).executeTakeFirst();
}

/** Nothing happens when the chunk exists: the same hash means the same bytes. */
export async function insertChunk(db: Db, sha256: string, seq: number, data: Uint8Array): Promise<void> {
  await db
    .insertInto('blob_chunks')
    .values({ sha256, seq, data })
    .onConflict((oc) => oc.columns(['sha256', 'seq']).doNothing())
    .execute();
}

export async function insertBlob(db: Db, sha256: string, size: number): Promise<void> {
  await db
    .insertInto('blobs')
    .values({ sha256, size })
    .onConflict((oc) => oc.column('sha256').doNothing())
    .execute();
}

export async function readChunk(db: Db, sha256: string, seq: number): Promise<Uint8Array | undefined> {
  const row = await db.selectFrom('blob_chunks').select('data').where('sha256', '=', sha256).where('seq', '=', seq).executeTakeFirst();
  return row?.data;
}

/** Deletes the blob's row first (from then on it is missing), then its chunks; run in a transaction. */
export async function deleteBlob(db: Db, sha256: string): Promise<void> {
  await db.deleteFrom('blobs').where('sha256', '=', sha256).execute();
  await db.deleteFrom('blob_chunks').where('sha256', '=', sha256).execute();
}

/** Hashes that a firmware or installer row names and that are not (yet) complete blobs. */
export async function referencedButNotShared(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom('firmware')
    .select('sha256')
    .union(db.selectFrom('installers').select('sha256'))
    .except(db.selectFrom('blobs').select('sha256'))
    .execute();
  return rows.map((r) => r.sha256);
}
