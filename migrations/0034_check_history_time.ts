// Check state history is kept as long as metrics (issue 61): the hourly retention pass deletes by time,
// and without an index on it every pass would read the whole table.
import type { Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema.createIndex('check_state_history_at').on('check_state_history').column('at').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('check_state_history_at').execute();
  },
});

export default migration;
