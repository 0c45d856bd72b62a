// Identity and access: users (with TOTP state and token versions), customers, API keys (SHA-256 at rest),
// the audit log, login throttling and pending two-factor logins.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('users')
      .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('username', 'text', (c) => c.notNull())
      .addColumn('password_hash', 'text', (c) => c.notNull())
      .addColumn('totp_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('totp_secret', 'text') // encrypted with the server key
      .addColumn('totp_pending_secret', 'text') // encrypted; set by setup, moved to totp_secret by confirm
      .addColumn('totp_last_step', 'bigint') // last accepted TOTP time step: a code is accepted once
      .addColumn('token_version', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('last_login_at', 'timestamptz')
      .execute();
    await db.schema.createIndex('users_username_key').on('users').unique().expression(sql`lower(username)`).execute();

    await db.schema
      .createTable('customers')
      .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('number', 'text', (c) => c.notNull().unique())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();

    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('key_hint', 'text', (c) => c.notNull())
      .addColumn('permissions', 'text', (c) => c.notNull().check(sql`permissions in ('agent', 'read', 'write', 'admin')`))
      .addColumn('customer_id', 'integer', (c) => c.references('customers.id').onDelete('cascade'))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema.createIndex('api_keys_customer_id_idx').on('api_keys').column('customer_id').execute();

    await db.schema
      .createTable('audit_log')
      .addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('time', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('actor_type', 'text', (c) => c.notNull().check(sql`actor_type in ('user', 'api_key')`))
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('status_code', 'integer', (c) => c.notNull())
      .addColumn('ip', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
    await db.schema.createIndex('audit_log_time_idx').on('audit_log').columns(['time desc', 'id desc']).execute();
    await db.schema.createIndex('audit_log_actor_idx').on('audit_log').columns(['actor', 'time desc']).execute();
    await db.schema.createIndex('audit_log_action_idx').on('audit_log').columns(['action', 'time desc']).execute();

    await db.schema
      .createTable('login_failures')
      .addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('username', 'text', (c) => c.notNull()) // lower-cased
      .addColumn('failed_at', 'timestamptz', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('login_failures_username_idx').on('login_failures').columns(['username', 'failed_at']).execute();

    await db.schema
      .createTable('pending_logins')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
      .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('used_at', 'timestamptz')
      .execute();
  },
  async down(db: Kysely<unknown>) {
    for (const table of ['pending_logins', 'login_failures', 'audit_log', 'api_keys', 'customers', 'users']) {
      await db.schema.dropTable(table).execute();
    }
  },
});

export default migration;
