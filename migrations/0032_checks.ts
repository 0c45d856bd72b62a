// Checks and policies (issue 61): named sets of checks assigned to customers, tags and platforms, each
// agent's overrides, the latest state of every check on every agent, its changes over time, and a
// revision counter every change of a policy or override raises, so each instance of a cluster sees that
// its agents' sets must be computed again.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('check_policies')
      .addColumn('id', 'serial', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('name_key', 'text', (c) => c.notNull().unique())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
      // Who it applies to: every non-empty list must match (customers AND tags AND platforms); all empty: nobody.
      .addColumn('customer_ids', sql`integer[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
      .addColumn('tags', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
      .addColumn('platforms', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('policy_checks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('policy_id', 'integer', (c) => c.notNull().references('check_policies.id').onDelete('cascade'))
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('params', 'jsonb', (c) => c.notNull())
      .addColumn('interval_seconds', 'integer', (c) => c.notNull())
      .addColumn('timeout_seconds', 'integer', (c) => c.notNull())
      .addColumn('enabled', 'boolean', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('policy_checks_policy').on('policy_checks').columns(['policy_id', 'position']).execute();
    await db.schema
      .createTable('agent_check_overrides')
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('check_id', 'text', (c) => c.notNull().references('policy_checks.id').onDelete('cascade'))
      .addColumn('excluded', 'boolean', (c) => c.notNull())
      // Merged over the check's params for this agent (a threshold, a host).
      .addColumn('params', 'jsonb', (c) => c.notNull())
      .addColumn('interval_seconds', 'integer')
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .addPrimaryKeyConstraint('agent_check_overrides_pk', ['agent_id', 'check_id'])
      .execute();
    await db.schema
      .createTable('check_states')
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('check_id', 'text', (c) => c.notNull())
      .addColumn('state', 'smallint', (c) => c.notNull())
      .addColumn('output', 'text', (c) => c.notNull())
      .addColumn('perfdata', 'jsonb', (c) => c.notNull())
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addColumn('last_run_at', 'timestamptz', (c) => c.notNull())
      .addColumn('last_change_at', 'timestamptz', (c) => c.notNull())
      .addPrimaryKeyConstraint('check_states_pk', ['agent_id', 'check_id'])
      .execute();
    await db.schema.createIndex('check_states_failing').on('check_states').columns(['state', 'agent_id']).where(sql.ref('state'), '>', 0).execute();
    await db.schema
      .createTable('check_state_history')
      .addColumn('id', 'bigserial', (c) => c.primaryKey())
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('check_id', 'text', (c) => c.notNull())
      .addColumn('state', 'smallint', (c) => c.notNull())
      .addColumn('output', 'text', (c) => c.notNull())
      .addColumn('at', 'timestamptz', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('check_state_history_check').on('check_state_history').columns(['agent_id', 'check_id', 'at']).execute();
    // A check removed from a policy takes its history along.
    await db.schema.createIndex('check_state_history_check_id').on('check_state_history').column('check_id').execute();
    await db.schema
      .createTable('checks_revision')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('revision', 'bigint', (c) => c.notNull())
      .execute();
    await sql`insert into checks_revision (id, revision) values (1, 0)`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    for (const table of ['checks_revision', 'check_state_history', 'check_states', 'agent_check_overrides', 'policy_checks', 'check_policies']) {
      await db.schema.dropTable(table).execute();
    }
  },
});

export default migration;
