// Issue 35, Builds 1 and 4. Users get the keys' ladder of roles (read < write < admin) and may be
// limited to a set of customers (`all_customers` false: only those in user_customers). Everyone who
// exists now keeps what they had: admin, every customer. Sessions become rows, so a user can see where
// they are signed in and end one; a token names its session (`sid`) and is refused once it is gone.
// Audit entries keep the customer their object belongs to, for the same scope.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('users')
      .addColumn('role', 'text', (c) => c.notNull().defaultTo('admin').check(sql`role in ('read', 'write', 'admin')`))
      .addColumn('all_customers', 'boolean', (c) => c.notNull().defaultTo(true))
      .execute();
    await db.schema
      .createTable('user_customers')
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('customer_id', 'integer', (c) => c.notNull().references('customers.id').onDelete('cascade'))
      .addPrimaryKeyConstraint('user_customers_pk', ['user_id', 'customer_id'])
      .execute();
    await db.schema.createIndex('user_customers_customer').on('user_customers').column('customer_id').execute();
    await db.schema
      .createTable('user_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('ip', 'text', (c) => c.notNull())
      .addColumn('user_agent', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('last_used_at', 'timestamptz', (c) => c.notNull())
      .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('user_sessions_user').on('user_sessions').column('user_id').execute();
    // The customer an audit entry is about (no foreign key: the log outlives what it names).
    await db.schema.alterTable('audit_log').addColumn('customer_id', 'integer').execute();
    await sql`create index audit_log_customer_time on audit_log (customer_id, time desc, id desc) where customer_id is not null`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('audit_log').dropColumn('customer_id').execute();
    await db.schema.dropTable('user_sessions').execute();
    await db.schema.dropTable('user_customers').execute();
    await db.schema.alterTable('users').dropColumn('all_customers').dropColumn('role').execute();
  },
});

export default migration;
