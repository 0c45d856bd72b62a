// The agents with the facts the attention list needs (agent_attention_facts, written with each
// heartbeat by attention-facts.ts): a small row per agent, so the list never reads system data.
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
      f.updates_available, f.update_packages, f.certificates
    from agents as a
    left join agent_attention_facts as f on f.agent_id = a.id
    where ${inScope}
    order by a.name, a.id`.execute(db);
  return result.rows;
}
