// A heartbeat body's large top-level members are stored once per agent, by the hash of their text
// (issue 62, point 2): most of a body does not change between beats, and rewriting all of it into TOAST
// was three quarters of the WAL a heartbeat wrote. The agent row keeps the text between them
// (`system_pieces`) and their hashes in order (`system_refs`); the body is pieces and parts alternating.
// Rows written before keep their whole body in `system`, as do bodies with no large member.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('agent_system_parts')
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('hash', 'text', (c) => c.notNull())
      .addColumn('raw', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('agent_system_parts_pkey', ['agent_id', 'hash'])
      .execute();
    await db.schema.alterTable('agents').addColumn('system_pieces', sql`text[]`).execute();
    await db.schema.alterTable('agents').addColumn('system_refs', sql`text[]`).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('agents').dropColumn('system_refs').execute();
    await db.schema.alterTable('agents').dropColumn('system_pieces').execute();
    await db.schema.dropTable('agent_system_parts').execute();
  },
});

export default migration;
