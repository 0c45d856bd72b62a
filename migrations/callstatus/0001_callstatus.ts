// The call-status service's tables (callstatus.md §2, contract §12), prefixed `callstatus_` so they can
// live beside the RMM server's tables in one PostgreSQL database.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from '../context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('callstatus_users')
      .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('directory_id', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('display_name', 'text', (c) => c.notNull())
      .addColumn('extension', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('personal_nr', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('active', 'boolean', (c) => c.notNull().defaultTo(true))
      .execute();
    await db.schema.createIndex('callstatus_users_extension_idx').on('callstatus_users').column('extension').execute();
    // Personnel numbers match with `~` and white space removed on both sides.
    await sql`create index callstatus_users_personal_nr_idx on callstatus_users (regexp_replace(personal_nr, '[~[:space:]]', '', 'g'))`.execute(db);

    await db.schema
      .createTable('callstatus_devices')
      .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('hostname', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('callstatus_assignments')
      .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('callstatus_users.id').onDelete('cascade'))
      .addColumn('device_id', 'integer', (c) => c.notNull().references('callstatus_devices.id').onDelete('cascade'))
      .addColumn('segment', 'integer', (c) => c.notNull())
      .addUniqueConstraint('callstatus_assignments_user_device_segment_key', ['user_id', 'device_id', 'segment'])
      .execute();
    await db.schema.createIndex('callstatus_assignments_device_idx').on('callstatus_assignments').column('device_id').execute();

    await db.schema
      .createTable('callstatus_state')
      .addColumn('user_id', 'integer', (c) => c.primaryKey().references('callstatus_users.id').onDelete('cascade'))
      .addColumn('attendance', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('collaboration_status', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('phone_active', 'smallint', (c) => c.notNull().defaultTo(0))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('callstatus_colors')
      .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('status_key', 'text', (c) => c.notNull().unique())
      .addColumn('r', 'integer', (c) => c.notNull())
      .addColumn('g', 'integer', (c) => c.notNull())
      .addColumn('b', 'integer', (c) => c.notNull())
      .addColumn('effect', 'text', (c) => c.notNull().defaultTo(''))
      .execute();

    await db.schema
      .createTable('callstatus_activity')
      .addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('time', 'timestamptz', (c) => c.notNull())
      // The name at the time: the log outlives renamed and deleted users.
      .addColumn('user_id', 'integer', (c) => c.references('callstatus_users.id').onDelete('set null'))
      .addColumn('user_name', 'text', (c) => c.notNull())
      .addColumn('attendance', 'text', (c) => c.notNull())
      .addColumn('new_status', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('request', 'text', (c) => c.notNull())
      .addColumn('result', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('callstatus_activity_time_idx').on('callstatus_activity').columns(['time desc', 'id desc']).execute();
  },
  async down(db: Kysely<unknown>) {
    for (const table of ['callstatus_activity', 'callstatus_colors', 'callstatus_state', 'callstatus_assignments', 'callstatus_devices', 'callstatus_users']) {
      await db.schema.dropTable(table).execute();
    }
  },
});

export default migration;
