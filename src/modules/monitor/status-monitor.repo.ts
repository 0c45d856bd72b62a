// The monitor's one statement: recompute every agent's status as of `now`, remember it, and return the
// agents whose status changed since the last check. The remembered status lives in the agents table,
// so a restarted server does not repeat events.
//
// It skips the rows a heartbeat batch holds at that moment (SKIP LOCKED) instead of waiting for them: a
// batch updates several agents' rows, the monitor many, each in no particular order, and a monitor
// waiting on one batch's row while holding a row that batch wanted next was a deadlock (seen in the
// alerting bench: PostgreSQL aborted the batch, and its heartbeats were answered 503). A skipped agent
// is being heard from right now; the next check, a minute later, records whatever its status then is.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { ONLINE_BELOW_MS, STALE_UP_TO_MS } from '../agents/agent-status.js';

export type MonitoredStatus = 'online' | 'stale' | 'offline';

export async function advanceStatuses(db: Kysely<Database>, now: Date): Promise<Array<{ id: string; status: MonitoredStatus }>> {
  const onlineAfter = new Date(now.getTime() - ONLINE_BELOW_MS);
  const staleFrom = new Date(now.getTime() - STALE_UP_TO_MS);
  const status = sql`case when a.last_heartbeat > ${onlineAfter} then 'online'
                           when a.last_heartbeat >= ${staleFrom} then 'stale'
                           else 'offline' end`;
  const { rows } = await sql<{ id: string; status: MonitoredStatus }>`
    with changed as (
      select a.id, ${status} as status from agents a
      where a.last_heartbeat is not null and a.last_status is distinct from ${status}
      for no key update skip locked
    )
    update agents as a set last_status = c.status
    from changed c
    where a.id = c.id
    returning a.id, c.status`.execute(db);
  return rows;
}
