// The agents list sorted by hostname, agent version or primary IP (natural order, migration 0017) as
// indexes, so each page is an index range from its position instead of computing `natural_sort_key`
// for every agent and sorting them all: on the embedded database a page of 1,000 of 10,000 agents
// sorted by hostname took 1.4 s, most of it in that function. The expressions are exactly the list's
// keys (agents.repo.ts, agentKeyset), or the planner would not use them. A heartbeat rewrites these
// columns with the same values, which keeps its update HOT: an index is only touched when the value
// really changes. Customers get their name's key as a stored column, so the customer sort compares a
// column instead of calling the function on every joined row.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const SORT_INDEXES = [
  ['agents_hostname_order_idx', sql`natural_sort_key(hostname)`],
  ['agents_version_order_idx', sql`natural_sort_key(coalesce(agent_version, ''))`],
  ['agents_ip_order_idx', sql`natural_sort_key(coalesce(primary_ip, ''))`],
] as const;

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    for (const [name, key] of SORT_INDEXES) {
      await sql`create index ${sql.id(name)} on agents ((${key}) collate "C", name_key, id)`.execute(db);
    }
    await sql`alter table customers add column name_key text collate "C" not null generated always as (natural_sort_key(name)) stored`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await sql`alter table customers drop column name_key`.execute(db);
    for (const [name] of SORT_INDEXES) await db.schema.dropIndex(name).execute();
  },
});

export default migration;
