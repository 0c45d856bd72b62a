// The few facts of an agent's latest system data that the fleet page's attention list needs (updates
// available, how many, and each certificate's name, expiry and use), kept beside the agent and written
// with its heartbeat. Reading them out of every agent's full system data at request time parsed tens of
// megabytes for a 1,000-agent fleet (a second on PGlite, with the event loop blocked); this table is a
// few hundred bytes per agent. Existing agents are filled from their stored system data once, here.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('agent_attention_facts')
      .addColumn('agent_id', 'text', (c) => c.primaryKey().references('agents.id').onDelete('cascade'))
      .addColumn('updates_available', 'boolean')
      .addColumn('update_packages', 'integer')
      .addColumn('certificates', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
      .execute();
    // Every path is guarded by its type: agents may have sent any shape.
    await sql`
      insert into agent_attention_facts (agent_id, updates_available, update_packages, certificates)
      select a.id,
        case when jsonb_typeof(s.doc -> 'updates' -> 'available') = 'boolean' then (s.doc -> 'updates' ->> 'available')::boolean end,
        case when jsonb_typeof(s.doc -> 'updates' -> 'packages') = 'array' then jsonb_array_length(s.doc -> 'updates' -> 'packages') end,
        coalesce((select jsonb_agg(jsonb_build_object('name', c -> 'name', 'valid_to', c -> 'valid_to', 'in_use', c -> 'in_use'))
           from jsonb_array_elements(case when jsonb_typeof(s.doc -> 'certificates') = 'array' then s.doc -> 'certificates' else '[]'::jsonb end) as c
           where jsonb_typeof(c) = 'object'), '[]'::jsonb)
      from agents as a
      cross join lateral (select a.system::jsonb as doc) as s
      where a.system is not null and jsonb_typeof(s.doc) = 'object'`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('agent_attention_facts').execute();
  },
});

export default migration;
