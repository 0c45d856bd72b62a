// Shared blobs (issue 32): in cluster mode the firmware binaries and installer packages live in
// PostgreSQL, so an upload through one instance downloads through any other, with nothing shared but
// the database (a shared directory would add NFS and its failure modes to a cluster's set-up). Each
// blob is cut into 1 MiB chunks, never one huge value; its `blobs` row is what says it is complete, so
// a reader never sees half a blob. Chunks carry no foreign key to `blobs`: they are written before the
// row that declares them whole. Single-node mode keeps its blobs on disk and never writes these tables.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('blob_chunks')
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('data', 'bytea', (c) => c.notNull())
      .addPrimaryKeyConstraint('blob_chunks_pkey', ['sha256', 'seq'])
      .execute();

    await db.schema
      .createTable('blobs')
      .addColumn('sha256', 'text', (c) => c.primaryKey())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('blobs').ifExists().execute();
    await db.schema.dropTable('blob_chunks').ifExists().execute();
  },
});

export default migration;
