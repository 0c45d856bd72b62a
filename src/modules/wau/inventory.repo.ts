// All SQL of the Windows software inventory: the per-agent hash of the stored list, replacing an agent's
// rows, and the per-customer aggregation.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { InventoryEntry } from './inventory-entries.js';

type Db = Kysely<Database>;

export async function findInventoryHash(db: Db, agentId: string): Promise<string | undefined> {
  const row = await db.selectFrom('agent_software_state').select('hash').where('agent_id', '=', agentId).executeTakeFirst();
  return row?.hash;
}

/**
 * Records `hash` as the agent's stored list unless it already is, or a later heartbeat's list is
 * stored. True when recorded: the caller then replaces the rows in the same transaction. The upsert
 * locks the agent's state row, so two writers of one agent's inventory take turns.
 */
export async function claimInventory(db: Db, values: { agentId: string; hash: string; entryCount: number; receivedAt: Date }): Promise<boolean> {
  const row = await db
    .insertInto('agent_software_state')
    .values({ agent_id: values.agentId, hash: values.hash, entry_count: values.entryCount, received_at: values.receivedAt })
    .onConflict((oc) =>
      oc
        .column('agent_id')
        .doUpdateSet((eb) => ({
          hash: eb.ref('excluded.hash'),
          entry_count: eb.ref('excluded.entry_count'),
          received_at: eb.ref('excluded.received_at'),
        }))
        .where((eb) =>
          eb.and([
            eb('agent_software_state.hash', '<>', eb.ref('excluded.hash')),
            eb('agent_software_state.received_at', '<=', eb.ref('excluded.received_at')),
          ]),
        ),
    )
    .returning('agent_id')
    .executeTakeFirst();
  return row !== undefined;
}

/** The agent's rows become exactly `entries` (distinct by name, publisher and version). */
export async function replaceInventoryRows(db: Db, agentId: string, entries: readonly InventoryEntry[]): Promise<void> {
  await db.deleteFrom('agent_software').where('agent_id', '=', agentId).execute();
  if (entries.length === 0) return;
  // One statement for the whole list, with one array parameter per column.
  await sql`
    insert into agent_software (agent_id, name, publisher, version, install_date)
    select ${agentId}, u.name, u.publisher, u.version, u.install_date
    from unnest(${sql.val(entries.map((e) => e.name))}::text[], ${sql.val(entries.map((e) => e.publisher))}::text[],
                ${sql.val(entries.map((e) => e.version))}::text[], ${sql.val(entries.map((e) => e.install_date))}::text[])
      as u(name, publisher, version, install_date)`.execute(db);
}

/** One row per program (`version` null: the program's total) or program version, with its agent count. */
export interface InventoryCountRow {
  name: string;
  publisher: string;
  version: string | null;
  agent_count: number;
}

/**
 * The software of the customer's Windows agents (their customer as it is now), counted per program and
 * per program version in one pass: the grouping sets give each program's distinct agents next to its
 * versions' counts. Ordered by name (case-insensitive, then exact), publisher; totals before versions.
 */
export async function aggregateInventory(db: Db, customerId: number): Promise<InventoryCountRow[]> {
  const { rows } = await sql<InventoryCountRow>`
    select s.name, s.publisher, case when grouping(s.version) = 1 then null else s.version end as version,
           count(distinct s.agent_id)::int as agent_count
    from agent_software s
    join agents a on a.id = s.agent_id
    where a.customer_id = ${customerId} and a.platform = 'windows'
    group by grouping sets ((s.name, s.publisher, s.version), (s.name, s.publisher))
    order by lower(s.name) collate "C", s.name collate "C", s.publisher collate "C", grouping(s.version) desc, s.version collate "C"`.execute(db);
  return rows;
}
