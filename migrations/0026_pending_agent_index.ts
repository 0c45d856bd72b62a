// Registration looks for a pre-registered agent of the registering agent's name (hostname still
// "(ausstehend)"). Without an index that was a scan of every agent for each registration: at 10,000
// agents on the embedded database, a fleet starting up spent its time there and heartbeats timed out.
// A partial index holds only the pending agents, so it stays tiny and costs heartbeats nothing.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await sql`create index agents_pending_name_idx on agents (name) where hostname = '(ausstehend)'`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('agents_pending_name_idx').execute();
  },
});

export default migration;
