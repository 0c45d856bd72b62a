// Bulk actions (issue 33, Build 2): one action (exec, a script, update check, update, reboot, request
// update) on many agents, with one result row per agent. An agent that is not connected when the action
// starts waits for it (status `waiting`) until the action's expiry, and runs when it reconnects; a row
// being run is claimed with a lease (`claimed_by`, `lease_until`) so one instance runs it once.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('bulk_actions')
      .addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('params', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
      .addColumn('target', 'jsonb', (c) => c.notNull())
      .addColumn('scope_customer_id', 'integer', (c) => c.references('customers.id').onDelete('cascade'))
      .addColumn('actor_type', 'text', (c) => c.notNull())
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('task_id', 'bigint', (c) => c.references('tasks.id').onDelete('set null'))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('bulk_action_results')
      .addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('bulk_id', 'bigint', (c) => c.notNull().references('bulk_actions.id').onDelete('cascade'))
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('agent_name', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('result', 'jsonb')
      .addColumn('error', 'text')
      .addColumn('history_id', 'bigint')
      .addColumn('started_at', 'timestamptz')
      .addColumn('finished_at', 'timestamptz')
      .addColumn('claimed_by', 'text')
      .addColumn('lease_until', 'timestamptz')
      .execute();
    await db.schema.createIndex('bulk_action_results_bulk_idx').on('bulk_action_results').columns(['bulk_id', 'id']).execute();
    // The runner's question each pass: which rows wait or run.
    await sql`create index bulk_action_results_open_idx on bulk_action_results (status, id) where status in ('waiting', 'running')`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('bulk_action_results').execute();
    await db.schema.dropTable('bulk_actions').execute();
  },
});

export default migration;
