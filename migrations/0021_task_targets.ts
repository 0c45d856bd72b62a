// Tasks for a group of agents (issue 33, Build 2): a task names one agent (`agent_id`) or a target
// (`target`: a customer, a platform, a tag), resolved each time it runs. `scope_customer_id` is the
// customer a group task belongs to (its target's, or its creator's scope), for the same scope checks
// an agent's customer gives a single-agent task.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('tasks')
      .alterColumn('agent_id', (c) => c.dropNotNull())
      .execute();
    await db.schema
      .alterTable('tasks')
      .addColumn('target', 'jsonb')
      .addColumn('scope_customer_id', 'integer', (c) => c.references('customers.id').onDelete('cascade'))
      .execute();
    await sql`alter table tasks add constraint tasks_agent_or_target check ((agent_id is null) <> (target is null))`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await sql`delete from tasks where agent_id is null`.execute(db);
    await sql`alter table tasks drop constraint tasks_agent_or_target`.execute(db);
    await db.schema.alterTable('tasks').dropColumn('target').dropColumn('scope_customer_id').execute();
    await db.schema.alterTable('tasks').alterColumn('agent_id', (c) => c.setNotNull()).execute();
  },
});

export default migration;
