// Configuration backups (contract §7): one row per distinct configuration an agent sent, identified by
// the SHA-256 of its UTF-8 bytes, so taking the same configuration twice stores nothing new.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('config_backups')
      .addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('hash', 'text', (c) => c.notNull()) // SHA-256 hex of the content's UTF-8 bytes
      .addColumn('size', 'integer', (c) => c.notNull()) // bytes of that UTF-8 encoding
      .addColumn('content', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      // Deduplication, and the conflict target that makes concurrent backups of one agent race-safe.
      .addUniqueConstraint('config_backups_agent_hash_key', ['agent_id', 'hash'])
      .execute();
    // Configuration XML compresses several-fold. Backups are written rarely, so the default (pglz, as
    // on PGlite) is fine; lz4, where the server has it, reads and writes faster for the same saving.
    const { rows } = await sql<{ lz4: boolean }>`
      select coalesce(bool_or(enumvals @> array['lz4']), false) as lz4
      from pg_settings where name = 'default_toast_compression'`.execute(db);
    if (rows[0]?.lz4) await sql`alter table config_backups alter column content set compression lz4`.execute(db);
    await db.schema
      .createIndex('config_backups_agent_time_idx')
      .on('config_backups')
      .columns(['agent_id', 'created_at desc', 'id desc'])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('config_backups').execute();
  },
});

export default migration;
