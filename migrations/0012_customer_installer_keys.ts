// Per-customer installer keys (issue 30): the agent key that installer packages downloaded for a customer
// carry in rmm-agent.json. One per customer, an ordinary agent key scoped to it (listed with its keys;
// deleting it there revokes it), kept here sealed with the server's encryption key because packages
// need it in clear text and api_keys holds only its hash. Deleting the key or the customer deletes the
// row; the next download for that customer makes a new key.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('customer_installer_keys')
      .addColumn('customer_id', 'integer', (c) => c.primaryKey().references('customers.id').onDelete('cascade'))
      .addColumn('api_key_id', 'integer', (c) => c.notNull().unique().references('api_keys.id').onDelete('cascade'))
      .addColumn('sealed_key', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('customer_installer_keys').execute();
  },
});

export default migration;
