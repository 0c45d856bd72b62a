// All SQL of agent events.
import type { Kysely } from 'kysely';
import type { AgentEventType, Database } from '../../db/schema.js';
import type { CustomerScope } from '../auth/caller.js';

export interface EventFilter {
  agentId?: string | undefined;
  type?: AgentEventType | undefined;
  scope: CustomerScope;
  limit: number;
}

export function listEvents(db: Kysely<Database>, f: EventFilter) {
  return db
    .selectFrom('agent_events as e')
    .select(['e.id', 'e.agent_id', 'e.type', 'e.created_at'])
    .$if(f.scope !== null, (q) => q.innerJoin('agents as a', 'a.id', 'e.agent_id').where('a.customer_id', '=', f.scope))
    .$if(f.agentId !== undefined, (q) => q.where('e.agent_id', '=', f.agentId!))
    .$if(f.type !== undefined, (q) => q.where('e.type', '=', f.type!))
    .orderBy('e.created_at', 'desc')
    .orderBy('e.id', 'desc')
    .limit(f.limit)
    .execute();
}

export async function insertEvents(
  db: Kysely<Database>,
  events: ReadonlyArray<{ agent_id: string; type: AgentEventType; created_at: Date }>,
): Promise<void> {
  if (events.length > 0) await db.insertInto('agent_events').values([...events]).execute();
}
