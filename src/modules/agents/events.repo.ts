// All SQL of agent events.
import { sql, type Kysely } from 'kysely';
import { keysetPage, newestFirst, toPage } from '../../db/keyset.js';
import type { AgentEventType, Database } from '../../db/schema.js';
import type { PageRequest } from '../../platform/paging.js';
import { inScopeSql, type CustomerScope } from '../auth/caller.js';

export interface EventFilter {
  agentId?: string | undefined;
  type?: AgentEventType | undefined;
  scope: CustomerScope;
}

/** Events of one time (a monitor pass) by id. */
const NEWEST_FIRST = newestFirst('e.created_at', 'e.id');

export async function listEvents(db: Kysely<Database>, f: EventFilter, page: PageRequest) {
  const query = db
    .selectFrom('agent_events as e')
    .select(['e.id', 'e.agent_id', 'e.type', 'e.created_at'])
    .$if(f.scope !== null, (q) => q.innerJoin('agents as a', 'a.id', 'e.agent_id').where(inScopeSql('a.customer_id', f.scope!)))
    .$if(f.agentId !== undefined, (q) => q.where('e.agent_id', '=', f.agentId!))
    .$if(f.type !== undefined, (q) => q.where('e.type', '=', f.type!));
  return toPage(await keysetPage(query, NEWEST_FIRST, page).execute(), page.limit);
}

/**
 * Stores events in the given order (their ids follow it). One statement text whatever their number, so
 * batches of any size share one plan; events of an agent deleted meanwhile are left out instead of
 * failing the whole batch on its foreign key. The existence check takes the key-share lock the foreign
 * key would take: a plain check saw an agent whose delete was still uncommitted, and when that delete
 * committed before the foreign key's own check, the batch failed, with every other agent's events in it.
 * Locked, the check waits for the delete and then skips the row.
 */
export async function insertEvents(
  db: Kysely<Database>,
  events: ReadonlyArray<{ agent_id: string; type: AgentEventType; created_at: Date }>,
): Promise<void> {
  if (events.length === 0) return;
  await sql`
    insert into agent_events (agent_id, type, created_at)
    select v.agent_id, v.type, v.created_at
    from unnest(${events.map((e) => e.agent_id)}::text[], ${events.map((e) => e.type)}::text[], ${events.map((e) => e.created_at.toISOString())}::timestamptz[])
      with ordinality as v(agent_id, type, created_at, n)
    where exists (select 1 from agents a where a.id = v.agent_id for key share)
    order by v.n`.execute(db);
}
