// The agents with the facts the attention list needs (agent_attention_facts, written with each
// heartbeat by attention-facts.ts): a small row per agent, so the list never reads system data.
import { sql, type Kysely } from 'kysely';
import { afterCondition, keyColumn, keyOrder, keyset, pageKeySelection } from '../../db/keyset.js';
import type { Database, Platform } from '../../db/schema.js';
import type { PageKey, PageRequest } from '../../platform/paging.js';
import { inScopeSql, type CustomerScope } from '../auth/caller.js';

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
  disks: Array<{ mount: unknown; used_percent: unknown }> | null;
}

/** As the agents list by name: the name in natural order (demo-2 before demo-10; migration 0017), then the id. */
const BY_NAME = keyset([keyColumn('a.name_key', 'text'), keyColumn('a.id', 'text')]);

/** Up to `limit` agents after the position, each with its own position (`page_key`). */
export async function listAttentionFacts(db: Kysely<Database>, scope: CustomerScope, request: PageRequest): Promise<Array<AttentionRow & { page_key: PageKey }>> {
  const inScope = scope === null ? sql`true` : inScopeSql('a.customer_id', scope);
  const result = await sql<AttentionRow & { page_key: PageKey }>`
    select a.id, a.name, a.hostname, a.platform, a.customer_id, a.last_heartbeat,
      f.updates_available, f.update_packages, f.certificates, f.disks, ${pageKeySelection(BY_NAME)}
    from agents as a
    left join agent_attention_facts as f on f.agent_id = a.id
    where ${inScope} and ${afterCondition(BY_NAME, request)}
    order by ${keyOrder(BY_NAME)}
    limit ${request.limit}`.execute(db);
  return result.rows;
}
