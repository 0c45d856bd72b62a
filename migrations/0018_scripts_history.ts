// Script library and command history (issue 33, Build 3). A script is a saved command (name, shell, body,
// parameters with defaults, the platforms it applies to). Every exec, ad hoc or scripted, single, bulk or
// from a task, is one history row: who ran it, when, on which agent, its exit code, duration and output
// (stdout and stderr, at most 256 KiB together, gzip-compressed; the first 2 KiB also as text, for
// searching and lists). A run in progress is a row without finished_at, so its entry survives a reload.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('scripts')
      .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('shell', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('parameters', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
      .addColumn('platforms', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute();
    await sql`create unique index scripts_name_idx on scripts (lower(name))`.execute(db);

    await db.schema
      .createTable('command_history')
      .addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('actor_type', 'text', (c) => c.notNull())
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('script_id', 'integer', (c) => c.references('scripts.id').onDelete('set null'))
      .addColumn('script_name', 'text')
      .addColumn('command', 'text', (c) => c.notNull())
      .addColumn('timeout_s', 'integer', (c) => c.notNull())
      .addColumn('started_at', 'timestamptz', (c) => c.notNull())
      .addColumn('finished_at', 'timestamptz')
      .addColumn('exit_code', 'integer')
      .addColumn('error', 'text')
      .addColumn('output', 'bytea')
      .addColumn('output_bytes', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('output_truncated', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('output_preview', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
    await db.schema.createIndex('command_history_agent_idx').on('command_history').columns(['agent_id', 'id desc']).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('command_history').execute();
    await db.schema.dropTable('scripts').execute();
  },
});

export default migration;
