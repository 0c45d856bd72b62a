// All SQL of the Windows software inventory: the per-agent hash of the stored list, replacing an agent's
// rows, and the per-customer aggregation.
import { sql, type Kysely } from 'kysely';
import { afterCondition, keyColumn, keyOrder, keyset, pageKeySelection } from '../../db/keyset.js';
import type { Database } from '../../db/schema.js';
import type { Page, PageKey, PageRequest } from '../../platform/paging.js';
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

/** Programs by name ignoring case, then name, then publisher (byte order): a program is (name, publisher). */
const BY_PROGRAM = keyset([keyColumn(sql`lower(s.name) collate "C"`, 'text'), keyColumn(sql`s.name collate "C"`, 'text'), keyColumn(sql`s.publisher collate "C"`, 'text')]);

/**
 * One page of the software of the customer's Windows agents (their customer as it is now), counted per
 * program and per program version: the page's programs first (keyset over the distinct programs), then
 * their counts in one pass, where the grouping sets give each program's distinct agents next to its
 * versions' counts. Rows are ordered by program, its total (version null) before its versions; `next`
 * is the position of the page's last program when more follow.
 */
export async function aggregateInventory(db: Db, customerId: number, page: PageRequest): Promise<Page<InventoryCountRow>> {
  const customerSoftware = sql`agent_software s join agents a on a.id = s.agent_id where a.customer_id = ${customerId} and a.platform = 'windows'`;
  const { rows: programs } = await sql<{ name: string; publisher: string; page_key: PageKey }>`
    select s.name, s.publisher, ${pageKeySelection(BY_PROGRAM)}
    from ${customerSoftware} and ${afterCondition(BY_PROGRAM, page)}
    group by s.name, s.publisher
    order by ${keyOrder(BY_PROGRAM)}
    limit ${page.limit + 1}`.execute(db);
  const shown = programs.slice(0, page.limit);
  const next = programs.length > page.limit ? shown.at(-1)!.page_key : null;
  if (shown.length === 0) return { items: [], next };
  const { rows } = await sql<InventoryCountRow>`
    select s.name, s.publisher, case when grouping(s.version) = 1 then null else s.version end as version,
           count(distinct s.agent_id)::int as agent_count
    from ${customerSoftware}
      and (s.name, s.publisher) in (select * from unnest(${shown.map((p) => p.name)}::text[], ${shown.map((p) => p.publisher)}::text[]))
    group by grouping sets ((s.name, s.publisher, s.version), (s.name, s.publisher))
    order by lower(s.name) collate "C", s.name collate "C", s.publisher collate "C", grouping(s.version) desc, s.version collate "C"`.execute(db);
  return { items: rows, next };
}
