// Tasks (contract §10): planned (`run_at`) or recurring (`cron`, UTC) jobs for one agent, and one row
// per run with its outcome and webhook delivery. A running task holds a lease (`lease_until`, renewed
// by the process running it, named in `claimed_by`), so a task whose process died is found and closed
// with a reason instead of staying `running` for ever.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('tasks')
      .addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('customer_number', 'text')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('params', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('run_at', 'timestamptz')
      .addColumn('cron', 'text')
      .addColumn('next_run_at', 'timestamptz')
      .addColumn('last_run_at', 'timestamptz')
      .addColumn('webhook_url', 'text')
      .addColumn('health_check_timeout', 'integer', (c) => c.notNull())
      .addColumn('result', 'jsonb')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('claimed_by', 'text')
      .addColumn('lease_until', 'timestamptz')
      .execute();
    // The scheduler's question: which scheduled tasks are due.
    await sql`create index tasks_due_idx on tasks (next_run_at) where status = 'scheduled'`.execute(db);
    await db.schema.createIndex('tasks_agent_idx').on('tasks').column('agent_id').execute();

    await db.schema
      .createTable('task_runs')
      .addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('task_id', 'bigint', (c) => c.notNull().references('tasks.id').onDelete('cascade'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('started_at', 'timestamptz', (c) => c.notNull())
      .addColumn('finished_at', 'timestamptz')
      .addColumn('result', 'jsonb')
      .addColumn('error', 'text')
      .addColumn('webhook', 'jsonb')
      .execute();
    await db.schema.createIndex('task_runs_task_idx').on('task_runs').columns(['task_id', 'id desc']).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('task_runs').execute();
    await db.schema.dropTable('tasks').execute();
  },
});

export default migration;
