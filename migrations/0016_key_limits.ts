// Enrollment keys (issue 33): an API key may expire at a time (`expires_at`) or after a number of uses
// (`max_uses`; a use is an install: an install script or installer package downloaded with the key).
// `uses` counts them for every key, so a technician sees how many devices a key installed.
import type { Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('api_keys')
      .addColumn('expires_at', 'timestamptz')
      .addColumn('max_uses', 'integer')
      .addColumn('uses', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('api_keys').dropColumn('expires_at').dropColumn('max_uses').dropColumn('uses').execute();
  },
});

export default migration;
