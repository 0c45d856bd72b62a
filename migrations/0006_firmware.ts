// Firmware (contract §9): one row per version and platform; the binary itself is a file named by its
// SHA-256 under DATA_DIR/blobs, so two rows with the same bytes share it. The installer package: one
// row per platform (only windows today), its ZIP stored the same way.
import type { Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('firmware')
      .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('version', 'text', (c) => c.notNull())
      .addColumn('platform', 'text', (c) => c.notNull())
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addUniqueConstraint('firmware_platform_version_key', ['platform', 'version'])
      .execute();
    await db.schema
      .createTable('installers')
      .addColumn('platform', 'text', (c) => c.primaryKey())
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('installers').execute();
    await db.schema.dropTable('firmware').execute();
  },
});

export default migration;
