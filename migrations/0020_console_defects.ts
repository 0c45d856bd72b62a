// Issue 33, Build 5 and 6. The audit log names the object a change was made to (`target`, e.g. "agent
// demo-3 (Bäckerei Sonnenschein GmbH)"), resolved when the entry is written: the path alone says
// `POST /api/v1/agents`, and a deleted object can no longer be looked up later. The attention facts
// keep each disk's fill level, so the fleet page can list disks nearly full without reading system
// data; existing agents are filled from their stored system data once, here (guarded by type as in 0009).
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('audit_log').addColumn('target', 'text').execute();
    await db.schema
      .alterTable('agent_attention_facts')
      .addColumn('disks', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
      .execute();
    // Same shape as attention-facts.ts writes: {mount, used_percent} with a whole percent, from
    // `used_percent`, else from used and total bytes.
    await sql`
      update agent_attention_facts as f
      set disks = coalesce((
        select jsonb_agg(jsonb_build_object(
          'mount', case when jsonb_typeof(d -> 'mount') in ('string', 'number', 'boolean') then d -> 'mount' end,
          'used_percent', case
            when jsonb_typeof(d -> 'used_percent') = 'number' then round((d ->> 'used_percent')::float8)
            when jsonb_typeof(d -> 'used_bytes') = 'number' and jsonb_typeof(d -> 'total_bytes') = 'number'
              and (d ->> 'total_bytes')::float8 > 0
              then round((d ->> 'used_bytes')::float8 / (d ->> 'total_bytes')::float8 * 100)
          end))
        from jsonb_array_elements(case when jsonb_typeof(s.doc -> 'disks') = 'array' then s.doc -> 'disks' else '[]'::jsonb end) as d
        where jsonb_typeof(d) = 'object'), '[]'::jsonb)
      from agents as a
      cross join lateral (select a.system::jsonb as doc) as s
      where a.id = f.agent_id and a.system is not null and jsonb_typeof(s.doc) = 'object'`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('agent_attention_facts').dropColumn('disks').execute();
    await db.schema.alterTable('audit_log').dropColumn('target').execute();
  },
});

export default migration;
