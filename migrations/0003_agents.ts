// Agents and their status events. The heartbeat body is kept as text: it comes back byte for byte (key
// order, number spelling, whitespace). Not `json`: the server has already parsed and checked the body,
// and having PostgreSQL check every 30 KB body again cost a quarter of the database's time per
// heartbeat (cast with `system::json` to query inside it).
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('agents')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('hostname', 'text', (c) => c.notNull())
      .addColumn('platform', 'text', (c) => c.check(sql`platform in ('freebsd', 'linux', 'windows')`))
      .addColumn('customer_id', 'integer', (c) => c.references('customers.id').onDelete('set null'))
      .addColumn('agent_version', 'text')
      .addColumn('agent_sha256', 'text')
      .addColumn('update_requested', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('last_heartbeat', 'timestamptz')
      .addColumn('last_api_key', 'text', (c) => c.notNull().defaultTo('')) // hint of the key of the last heartbeat
      .addColumn('last_status', 'text') // the status the monitor last reported, so restarts do not repeat events
      .addColumn('system', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    // Every heartbeat rewrites ~30 KB here. lz4 compresses it for little CPU and shrinks the WAL (measured:
    // +10-20% heartbeats/s); without lz4 (PGlite), no compression beats pglz, which cost more than it saved.
    const { rows } = await sql<{ lz4: boolean }>`
      select coalesce(bool_or(enumvals @> array['lz4']), false) as lz4
      from pg_settings where name = 'default_toast_compression'`.execute(db);
    await (rows[0]?.lz4
      ? sql`alter table agents alter column system set compression lz4`
      : sql`alter table agents alter column system set storage external`
    ).execute(db);
    await db.schema.createIndex('agents_customer_id_idx').on('agents').column('customer_id').execute();
    // Pre-registered names must be unique: registration adopts a pre-registered agent by its name.
    await db.schema
      .createIndex('agents_pending_name_key')
      .on('agents')
      .column('name')
      .unique()
      .where(sql.ref('hostname'), '=', '(ausstehend)')
      .execute();

    await db.schema
      .createTable('agent_events')
      .addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('type', 'text', (c) =>
        c.notNull().check(sql`type in ('online', 'offline', 'stale', 'connected', 'disconnected')`),
      )
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('agent_events_agent_idx').on('agent_events').columns(['agent_id', 'created_at desc', 'id desc']).execute();
    await db.schema.createIndex('agent_events_time_idx').on('agent_events').columns(['created_at desc', 'id desc']).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('agent_events').execute();
    await db.schema.dropTable('agents').execute();
  },
});

export default migration;
