// The agents list's default order (name ignoring case, then id; GET /agents, the attention list) as an
// index, so each page and each chunk of a streamed full list is an index range from its position
// instead of a sort of every agent. Heartbeats never change these columns, so their updates stay HOT.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema.createIndex('agents_name_order_idx').on('agents').expression(sql`lower(name), id`).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('agents_name_order_idx').execute();
  },
});

export default migration;
