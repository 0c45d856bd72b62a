// All SQL of cluster presence: which instance holds which agent's socket, the instances' own rows, and
// reaping an instance that stopped renewing its row (it died): its presence rows go, each agent gets
// one `disconnected` event dated when the instance was last seen, all in one statement, so two
// survivors reaping at once cannot write an agent's event twice.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

type Db = Kysely<Database>;

export interface PresenceChange {
  agentId: string;
  up: boolean;
  at: Date;
}

/** Applies changes of this instance's presence; for an agent changed twice, the last change counts. */
export async function applyPresence(db: Db, instanceId: string, changes: readonly PresenceChange[]): Promise<void> {
  const last = new Map(changes.map((c) => [c.agentId, c]));
  const up = [...last.values()].filter((c) => c.up);
  const down = [...last.values()].filter((c) => !c.up).map((c) => c.agentId);
  if (down.length > 0) await db.deleteFrom('agent_presence').where('instance_id', '=', instanceId).where('agent_id', 'in', down).execute();
  if (up.length === 0) return;
  // An agent deleted meanwhile is left out (the key-share lock waits for its delete; see insertEvents).
  await sql`
    insert into agent_presence (agent_id, instance_id, connected_at)
    select v.agent_id, ${instanceId}, v.at
    from unnest(${up.map((c) => c.agentId)}::text[], ${up.map((c) => c.at.toISOString())}::timestamptz[]) as v(agent_id, at)
    where exists (select 1 from agents a where a.id = v.agent_id for key share)
    on conflict (agent_id, instance_id) do update set connected_at = excluded.connected_at`.execute(db);
}

/** Agents held by live instances other than `instanceId`, with their holder. */
export async function remotePresence(db: Db, instanceId: string, liveWithinMs: number): Promise<Array<{ agent_id: string; instance_id: string }>> {
  const { rows } = await sql<{ agent_id: string; instance_id: string }>`
    select p.agent_id, p.instance_id from agent_presence p
    join cluster_instances i on i.id = p.instance_id
    where p.instance_id <> ${instanceId} and i.last_seen_at > now() - ${`${liveWithinMs} milliseconds`}::interval`.execute(db);
  return rows;
}

/** Creates or renews this instance's row (its sign of life); true when the row had to be created. */
export async function renewInstance(db: Db, instance: { id: string; advertiseAddress: string; startedAt: Date }): Promise<boolean> {
  // xmax is 0 on a row version this statement inserted, and this transaction's id where it updated.
  const { rows } = await sql<{ inserted: boolean }>`
    insert into cluster_instances (id, advertise_address, started_at, last_seen_at)
    values (${instance.id}, ${instance.advertiseAddress}, ${instance.startedAt}, now())
    on conflict (id) do update set advertise_address = excluded.advertise_address, started_at = excluded.started_at, last_seen_at = now()
    returning (xmax = 0) as inserted`.execute(db);
  return rows[0]?.inserted ?? false;
}

export async function liveInstances(db: Db, liveWithinMs: number): Promise<Array<{ id: string; advertise_address: string; started_at: Date; last_seen_at: Date }>> {
  const { rows } = await sql<{ id: string; advertise_address: string; started_at: Date; last_seen_at: Date }>`
    select id, advertise_address, started_at, last_seen_at from cluster_instances
    where last_seen_at > now() - ${`${liveWithinMs} milliseconds`}::interval order by id`.execute(db);
  return rows;
}

/**
 * Reaps instances not seen for `deadAfterMs` (and, with `self`, this instance's own leftovers from a
 * previous run under the same INSTANCE_ID). Returns how many agents got their `disconnected` event.
 */
export async function reapInstances(db: Db, opts: { deadAfterMs: number; self?: string }): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    with dead as (
      delete from cluster_instances
      where last_seen_at < now() - ${`${opts.deadAfterMs} milliseconds`}::interval or id = ${opts.self ?? null}
      returning id, last_seen_at
    ), gone as (
      delete from agent_presence p using dead where p.instance_id = dead.id
      returning p.agent_id, p.connected_at, dead.last_seen_at
    ), written as (
      insert into agent_events (agent_id, type, created_at)
      -- Never before the agent's last connect: the presence row's time can be a moment before the event's.
      select g.agent_id, 'disconnected', greatest(g.last_seen_at, g.connected_at, (
        select max(c.created_at) from agent_events c where c.agent_id = g.agent_id and c.type = 'connected'))
      from gone g
      where exists (select 1 from agents a where a.id = g.agent_id for key share)
        -- The instance wrote this connection's event itself and died before deleting its row.
        and not exists (
          select 1 from agent_events e
          where e.agent_id = g.agent_id and e.type = 'disconnected' and e.created_at >= g.connected_at)
      returning 1
    )
    select count(*)::int as n from written`.execute(db);
  return rows[0]?.n ?? 0;
}
