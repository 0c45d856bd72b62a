// 0026 added an index on pending agents' names, believing registration had none and scanned every
// agent. It had one since 0003: `agents_pending_name_key`, unique, with the same predicate. What made
// registration scan was its condition, a bound parameter the planner could not match to the index's
// predicate; written as a literal (agents.repo.ts), it uses 0003's index. 0026's copy only cost every
// write to a pending agent one more index entry, so it goes.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await sql`drop index if exists agents_pending_name_idx`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await sql`create index agents_pending_name_idx on agents (name) where hostname = '(ausstehend)'`.execute(db);
  },
});

export default migration;
