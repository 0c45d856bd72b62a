// The few facts the attention list needs from each agent's latest system data, pulled out in SQL so
// the documents (tens of kilobytes each) never leave the database: the updates flag and package count,
// and each certificate's name, expiry and use. The text is parsed once per agent (jsonb), and every
// path is guarded by its type, because agents may send any shape.
import { sql, type Kysely } from 'kysely';
import type { Database, Platform } from '../../db/schema.js';
import type { CustomerScope } from '../auth/caller.js';

export interface AttentionRow {
  id: string;
  name: string;
  hostname: string;
  platform: Platform | null;
  customer_id: number | null;
  last_heartbeat: Date | null;
  updates_available: boolean | null;
  update_packages: number | null;
  certificates: Array<{ name: unknown; valid_to: unknown; in_use: unknown }> | null;
}

export async function listAttentionFacts(db: Kysely<Database>, scope: CustomerScope): Promise<AttentionRow[]> {
  const inScope = scope === null ? sql`true` : sql`a.customer_id = ${scope}`;
  const result = await sql<AttentionRow>`
    select a.id, a.name, a.hostname, a.platform, a.customer_id, a.last_heartbeat,
      case when jsonb_typeof(s.doc -> 'updates' -> 'available') = 'boolean'
        then (s.doc -> 'updates' ->> 'available')::boolean end as updates_available,
      case when jsonb_typeof(s.doc -> 'updates' -> 'packages') = 'array'
        then jsonb_array_length(s.doc -> 'updates' -> 'packages') end as update_packages,
      (select json_agg(json_build_object('name', c -> 'name', 'valid_to', c -> 'valid_to', 'in_use', c -> 'in_use'))
         from jsonb_array_elements(case when jsonb_typeof(s.doc -> 'certificates') = 'array' then s.doc -> 'certificates' else '[]'::jsonb end) as c
         where jsonb_typeof(c) = 'object') as certificates
    from agents as a
    cross join lateral (select a.system::jsonb as doc) as s
    where ${inScope}
    order by a.name, a.id`.execute(db);
  return result.rows;
}
