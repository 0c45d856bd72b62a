// Cluster mode (issue 32): what instances sharing one database must know of each other. Each instance
// keeps a row alive in cluster_instances; agent_presence says which instance holds which agent's
// socket (an agent may briefly appear on two while a replaced socket closes); cluster_leases elects
// the one instance that runs once-per-cluster work (fenced by a token that grows at every change of
// holder); cluster_replies holds command answers too large for a bus message until the asker reads
// them. Single-node mode never writes these tables.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('cluster_instances')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('advertise_address', 'text', (c) => c.notNull())
      .addColumn('started_at', 'timestamptz', (c) => c.notNull())
      .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('agent_presence')
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('instance_id', 'text', (c) => c.notNull())
      .addColumn('connected_at', 'timestamptz', (c) => c.notNull())
      .addPrimaryKeyConstraint('agent_presence_pkey', ['agent_id', 'instance_id'])
      .execute();
    await db.schema.createIndex('agent_presence_instance').on('agent_presence').column('instance_id').execute();

    await db.schema
      .createTable('cluster_leases')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('token', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('cluster_replies')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
  },
  async down(db: Kysely<unknown>) {
    for (const table of ['cluster_replies', 'cluster_leases', 'agent_presence', 'cluster_instances']) {
      await db.schema.dropTable(table).ifExists().execute();
    }
  },
});

export default migration;
