// Issue 57: password sign-in was throttled per username alone, so ten wrong passwords from anywhere
// locked the user out, and one address could try any number of usernames. Failures are now counted per
// (username, address), per address and per username (a high ceiling), as leaky counters with back-off
// (src/modules/auth/login-throttle.ts). One row per counter: `username` '' is an address's counter,
// `address` '' a username's. The old per-failure rows cover at most the last 15 minutes and are dropped.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('login_throttle')
      .addColumn('username', 'text', (c) => c.notNull()) // lower-cased; '' for an address's own counter
      .addColumn('address', 'text', (c) => c.notNull()) // an IPv4 address or an IPv6 /64; '' for a username's
      .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('leak_from', 'timestamptz', (c) => c.notNull())
      .addColumn('blocked_until', 'timestamptz')
      .addColumn('succeeded_at', 'timestamptz')
      .addColumn('forgotten_at', 'timestamptz', (c) => c.notNull())
      .addPrimaryKeyConstraint('login_throttle_pkey', ['username', 'address'])
      .execute();
    await db.schema.createIndex('login_throttle_forgotten_idx').on('login_throttle').column('forgotten_at').execute();
    await db.schema.dropTable('login_failures').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema
      .createTable('login_failures')
      .addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('username', 'text', (c) => c.notNull())
      .addColumn('failed_at', 'timestamptz', (c) => c.notNull())
      .execute();
    await sql`create index login_failures_username_idx on login_failures (username, failed_at)`.execute(db);
    await db.schema.dropTable('login_throttle').execute();
  },
});

export default migration;
