// Windows software inventory and per-customer winget-autoupdate rules (spec section 4, contract §3).
// The inventory is one row per agent and distinct (name, publisher, version), replaced as a whole when
// an agent's heartbeat reports a different list; a per-agent hash of the stored list lets an unchanged
// heartbeat (the normal case) skip every write. Rules are per customer; `wau_list_changes` records when
// a customer's rules last changed (created or deleted), for the lists' Last-Modified.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('wau_rules')
      .addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('customer_id', 'integer', (c) => c.notNull().references('customers.id').onDelete('cascade'))
      .addColumn('action', 'text', (c) => c.notNull().check(sql`action in ('allow', 'block')`))
      .addColumn('package_id', 'text', (c) => c.notNull())
      .addColumn('display_name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .execute();
    // winget matches package ids case-insensitively (so does winget-autoupdate's list lookup), so
    // `Mozilla.Firefox` and `mozilla.firefox` are one package: one rule per customer for either spelling.
    await sql`create unique index wau_rules_customer_package_key on wau_rules (customer_id, lower(package_id))`.execute(db);

    await db.schema
      .createTable('wau_list_changes')
      .addColumn('customer_id', 'integer', (c) => c.primaryKey().references('customers.id').onDelete('cascade'))
      // Whole seconds (HTTP dates have no more), strictly increasing per change.
      .addColumn('changed_at', 'timestamptz', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('agent_software')
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('publisher', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('version', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('install_date', 'text', (c) => c.notNull().defaultTo(''))
      // Also the per-agent index for replacing an agent's rows, and what makes count(*) count agents.
      .addPrimaryKeyConstraint('agent_software_pkey', ['agent_id', 'name', 'publisher', 'version'])
      .execute();

    await db.schema
      .createTable('agent_software_state')
      .addColumn('agent_id', 'text', (c) => c.primaryKey().references('agents.id').onDelete('cascade'))
      .addColumn('hash', 'text', (c) => c.notNull()) // SHA-256 hex of the normalised stored list
      .addColumn('entry_count', 'integer', (c) => c.notNull())
      .addColumn('received_at', 'timestamptz', (c) => c.notNull()) // the heartbeat that brought it
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('agent_software_state').execute();
    await db.schema.dropTable('agent_software').execute();
    await db.schema.dropTable('wau_list_changes').execute();
    await db.schema.dropTable('wau_rules').execute();
  },
});

export default migration;
