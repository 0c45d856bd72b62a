// The monitor's one statement: recompute every agent's status as of `now`, remember it, and return the
// agents whose status changed since the last check. The remembered status lives in the agents table,
// so a restarted server does not repeat events.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { ONLINE_BELOW_MS, STALE_UP_TO_MS } from '../agents/agent-status.js';

export type MonitoredStatus = 'online' | 'stale' | 'offline';

export async function advanceStatuses(db: Kysely<Database>, now: Date): Promise<Array<{ id: string; status: MonitoredStatus }>> {
  const onlineAfter = new Date(now.getTime() - ONLINE_BELOW_MS);
  const staleFrom = new Date(now.getTime() - STALE_UP_TO_MS);
  const { rows } = await sql<{ id: string; status: MonitoredStatus }>`
    with computed as (
      select id,
             case when last_heartbeat > ${onlineAfter} then 'online'
                  when last_heartbeat >= ${staleFrom} then 'stale'
                  else 'offline' end as status
      from agents
      where last_heartbeat is not null
    )
    update agents as a set last_status = c.status
    from computed c
    where a.id = c.id and a.last_status is distinct from c.status
    returning a.id, c.status`.execute(db);
  return rows;
}
