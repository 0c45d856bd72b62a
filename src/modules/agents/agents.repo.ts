// All SQL of agents, except the heartbeat batch write (heartbeat-writer.ts) and events (events.repo.ts).
import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import { keyColumn, keyset, keysetPage, toPage, type KeyColumn, type Keyset } from '../../db/keyset.js';
import type { AgentsTable, Database, Platform } from '../../db/schema.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { inScopeSql, type CustomerScope } from '../auth/caller.js';
import { heartbeatWindow, ONLINE_BELOW_MS, STALE_UP_TO_MS, type AgentStatus } from './agent-status.js';
import { joinSystem } from './system-cuts.js';

type Db = Kysely<Database>;

export const PENDING_HOSTNAME = '(ausstehend)';

/** Every column but the system data, which is read separately and only as text. */
const AGENT_COLUMNS = [
  'id',
  'name',
  'hostname',
  'platform',
  'customer_id',
  'agent_version',
  'agent_sha256',
  'update_requested',
  'last_heartbeat',
  'last_api_key',
  'created_at',
  'updater_state',
  'updater_version',
  'updater_message',
  'updater_reported_at',
  'tags',
  'note',
  'os_name',
  'os_version',
  'primary_ip',
  'uptime_seconds',
  'disk_used_percent',
  'disk_worst_mount',
  'pending_updates',
  'reboot_required',
  'capabilities',
] as const;

/** An agent without its system data (read separately, as text) and the monitor's bookkeeping. */
export type AgentRow = Omit<Selectable<AgentsTable>, 'system' | 'system_pieces' | 'system_refs' | 'last_status' | 'update_requested_at' | 'name_key' | 'tag_keys'>;

export const AGENT_SORTS = [
  'name',
  'hostname',
  'customer',
  'platform',
  'status',
  'last_heartbeat',
  'version',
  'os',
  'ip',
  'uptime',
  'disk',
  'updates',
  'reboot',
] as const;
export type AgentSort = (typeof AGENT_SORTS)[number];

export interface AgentFilter {
  scope: CustomerScope;
  customerId?: number | undefined;
  status?: AgentStatus | undefined;
  platform?: Platform | undefined;
  q?: string | undefined;
  /** Agents carrying this tag, compared lower-cased (tagKey). */
  tag?: string | undefined;
  now: Date;
}

/** A tag as the `tag` filter and uniqueness compare it: lower-cased in the application, so both databases agree. */
export const tagKey = (tag: string) => tag.toLowerCase();

export interface AgentOrder {
  sort: AgentSort;
  descending: boolean;
}

/** Status as a number in the list's status order: offline 0, stale 1, unknown 2, online 3. */
function statusRank(now: Date) {
  const onlineFrom = new Date(now.getTime() - ONLINE_BELOW_MS);
  const staleFrom = new Date(now.getTime() - STALE_UP_TO_MS);
  return sql`(case when a.last_heartbeat is null then 2 when a.last_heartbeat > ${onlineFrom} then 3 when a.last_heartbeat >= ${staleFrom} then 1 else 0 end)`;
}

/** Text in natural order (migration 0017): digit runs by number, case and common accents folded, bytewise. */
const natural = (expr: RawBuilder<unknown>) => sql`natural_sort_key(${expr}) collate "C"`;

/** A nullable number ascending with a missing value first: presence flag, then the value. */
const missingFirst = (expr: RawBuilder<unknown>): KeyColumn[] => [
  keyColumn(sql`(${expr} is not null)::int4`, 'int4'),
  keyColumn(sql`coalesce(${expr}, 0)::int4`, 'int4'),
];

/**
 * The order of each sort: its key (text in natural order; a missing value sorts as the lowest), then
 * the name in natural order, then the id, all ascending or all descending.
 */
function agentKeyset(order: AgentOrder, now: Date): Keyset {
  const first: Record<AgentSort, KeyColumn[]> = {
    name: [],
    hostname: [keyColumn(natural(sql`a.hostname`), 'text')],
    // customers.name_key is natural_sort_key(name) (migration 0025); no customer sorts as ''.
    customer: [keyColumn(sql`coalesce(c.name_key, '') collate "C"`, 'text')],
    platform: [keyColumn(sql`coalesce(a.platform, '')`, 'text')],
    status: [keyColumn(statusRank(now), 'int4')],
    // Never-seen agents first (ascending); the epoch only fills the slot, the flag orders them.
    last_heartbeat: [keyColumn(sql`(a.last_heartbeat is not null)::int4`, 'int4'), keyColumn(sql`coalesce(a.last_heartbeat, 'epoch'::timestamptz)`, 'timestamptz')],
    version: [keyColumn(natural(sql`coalesce(a.agent_version, '')`), 'text')],
    os: [keyColumn(natural(sql`concat_ws(' ', a.os_name, a.os_version)`), 'text')],
    ip: [keyColumn(natural(sql`coalesce(a.primary_ip, '')`), 'text')],
    uptime: missingFirst(sql`a.uptime_seconds`),
    // Tenths of a percent: the key types are integers, and a finer order would show nothing more.
    disk: missingFirst(sql`round(a.disk_used_percent * 10)`),
    updates: missingFirst(sql`a.pending_updates`),
    // Unknown, no, yes.
    reboot: [keyColumn(sql`(case when a.reboot_required is null then 0 when a.reboot_required then 2 else 1 end)`, 'int4')],
  };
  return keyset([...first[order.sort], keyColumn('a.name_key', 'text'), keyColumn('a.id', 'text')], order.descending);
}

export async function listAgents(db: Db, f: AgentFilter, order: AgentOrder, page: PageRequest): Promise<Page<AgentRow>> {
  let query = db.selectFrom('agents as a').select(AGENT_COLUMNS.map((c) => `a.${c}` as const));
  if (order.sort === 'customer') query = query.leftJoin('customers as c', 'c.id', 'a.customer_id') as unknown as typeof query;
  if (f.scope !== null) query = query.where(inScopeSql('a.customer_id', f.scope));
  if (f.customerId !== undefined) query = query.where('a.customer_id', '=', f.customerId);
  if (f.platform !== undefined) query = query.where('a.platform', '=', f.platform);
  if (f.q) {
    const pattern = `%${f.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    // Name, hostname and primary IP as one lower-cased text (joined by a control character no search
    // holds, so a match never spans two fields), and the customer's name through a subquery that runs
    // once (the customers are few). One LIKE instead of three ILIKEs keeps the search over 10,000
    // agents as fast as the former name-or-hostname ILIKEs (bench/agent-search.ts).
    query = query.where((eb) =>
      eb.or([
        sql<boolean>`lower(concat_ws(chr(31), a.name, a.hostname, a.primary_ip)) like lower(${pattern})`,
        eb('a.customer_id', 'in', eb.selectFrom('customers').select('customers.id').where(sql<boolean>`lower(customers.name) like lower(${pattern})`)),
      ]),
    );
  }
  if (f.tag !== undefined) query = query.where(sql<boolean>`a.tag_keys @> array[${tagKey(f.tag)}::text]`);
  if (f.status === 'unknown') query = query.where('a.last_heartbeat', 'is', null);
  else if (f.status) {
    const w = heartbeatWindow(f.status, f.now);
    if (w.after) query = query.where('a.last_heartbeat', '>', w.after);
    if (w.atOrAfter) query = query.where('a.last_heartbeat', '>=', w.atOrAfter);
    if (w.before) query = query.where('a.last_heartbeat', '<', w.before);
    if (w.atOrBefore) query = query.where('a.last_heartbeat', '<=', w.atOrBefore);
  }
  return toPage(await keysetPage(query, agentKeyset(order, f.now), page).execute(), page.limit);
}

/** Which of these agents belong to the customer. */
export async function agentIdsInScope(db: Db, scope: readonly number[], ids: readonly string[]): Promise<string[]> {
  const rows = await db.selectFrom('agents').select('id').where(inScopeSql('customer_id', scope)).where('id', 'in', [...ids]).execute();
  return rows.map((r) => r.id);
}

export function findAgent(db: Db, id: string): Promise<AgentRow | undefined> {
  return db.selectFrom('agents').select(AGENT_COLUMNS).where('id', '=', id).executeTakeFirst();
}

export function findAgents(db: Db, ids: readonly string[]): Promise<AgentRow[]> {
  return ids.length === 0 ? Promise.resolve([]) : db.selectFrom('agents').select(AGENT_COLUMNS).where('id', 'in', ids).execute();
}

/**
 * The stored heartbeat exactly as received (null before the first heartbeat): whole in `system`, or
 * its pieces and parts joined again (system-cuts.ts).
 */
export async function findSystemText(db: Db, id: string): Promise<{ customer_id: number | null; system: string | null } | undefined> {
  const row = await db
    .selectFrom('agents as a')
    .select([
      'a.customer_id',
      'a.system',
      'a.system_pieces',
      sql<Array<string | null>>`array(select p.raw from unnest(a.system_refs) with ordinality as r(hash, i)
        left join agent_system_parts as p on p.agent_id = a.id and p.hash = r.hash order by r.i)`.as('parts'),
    ])
    .where('a.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  if (row.system !== null || row.system_pieces === null) return { customer_id: row.customer_id, system: row.system };
  // A part is deleted only by the statement that stores a body without it, in the same transaction
  // as the row, so a missing one is a broken invariant, never a moment between two writes.
  if (row.parts.some((p) => p === null)) throw new Error(`agent ${id}: a part of the stored system data is missing`);
  return { customer_id: row.customer_id, system: joinSystem(row.system_pieces, row.parts as string[]) };
}

export function insertAgent(
  db: Db,
  values: { id: string; name: string; hostname: string; customer_id: number | null; platform?: Platform; agent_version?: string | null },
): Promise<AgentRow> {
  return db.insertInto('agents').values(values).returning(AGENT_COLUMNS).executeTakeFirstOrThrow();
}

/** The pending-agent condition as a literal, so the planner can use the partial unique index on pending names (0003). */
const IS_PENDING = sql<boolean>`hostname = ${sql.lit(PENDING_HOSTNAME)}`;

/**
 * What a registration may match, in one statement: the agent with its id (if it sent one) and the
 * pre-registered agents of its name within the scope. Read outside a transaction: the caller decides
 * from it whether the registration needs one (claiming a pending agent does).
 */
export async function findRegistrationMatches(db: Db, agentId: string | undefined, name: string, scope: CustomerScope): Promise<{ existing: AgentRow | undefined; pending: boolean }> {
  const rows = await db
    .selectFrom('agents')
    .select(AGENT_COLUMNS)
    .where((eb) => {
      const pending = eb.and([IS_PENDING, eb('name', '=', name), ...(scope !== null ? [inScopeSql('customer_id', scope)] : [])]);
      return agentId === undefined ? pending : eb.or([eb('id', '=', agentId), pending]);
    })
    .execute();
  const existing = agentId === undefined ? undefined : rows.find((row) => row.id === agentId);
  return { existing, pending: rows.some((row) => row !== existing) };
}

export function findPendingByName(db: Db, name: string, scope: CustomerScope) {
  return db
    .selectFrom('agents')
    .select(AGENT_COLUMNS)
    .where(IS_PENDING)
    .where('name', '=', name)
    .$if(scope !== null, (q) => q.where(inScopeSql('customer_id', scope!)))
    .forUpdate()
    .executeTakeFirst();
}

/** The agent, locked until the transaction ends (a registration deciding whether it joins a customer). */
export function lockAgent(db: Db, id: string): Promise<AgentRow | undefined> {
  return db.selectFrom('agents').select(AGENT_COLUMNS).where('id', '=', id).forUpdate().executeTakeFirst();
}

/** The agent's registration details; with a scope, only while the agent is within it (undefined otherwise, or when it is gone). */
export function updateRegistration(
  db: Db,
  id: string,
  values: { hostname: string; platform: Platform; agent_version?: string | null | undefined },
  scope: CustomerScope = null,
): Promise<AgentRow | undefined> {
  return db
    .updateTable('agents')
    .set({ hostname: values.hostname, platform: values.platform, ...(values.agent_version ? { agent_version: values.agent_version } : {}) })
    .where('id', '=', id)
    .$if(scope !== null, (q) => q.where(inScopeSql('customer_id', scope!)))
    .returning(AGENT_COLUMNS)
    .executeTakeFirst();
}

export function setAgentCustomer(db: Db, id: string, customerId: number | null): Promise<AgentRow | undefined> {
  return db.updateTable('agents').set({ customer_id: customerId }).where('id', '=', id).returning(AGENT_COLUMNS).executeTakeFirst();
}

/** Sets the tags (with their filter keys) and/or the note; undefined leaves a field as it is. */
export function annotateAgent(db: Db, id: string, values: { tags?: string[] | undefined; note?: string | undefined }): Promise<AgentRow | undefined> {
  return db
    .updateTable('agents')
    .set({
      ...(values.tags !== undefined ? { tags: values.tags, tag_keys: values.tags.map(tagKey) } : {}),
      ...(values.note !== undefined ? { note: values.note } : {}),
    })
    .where('id', '=', id)
    .returning(AGENT_COLUMNS)
    .executeTakeFirst();
}

/** Every tag in use among the scope's agents (one spelling per tag ignoring case), with how many carry it. */
export async function listTags(db: Db, scope: CustomerScope): Promise<Array<{ tag: string; agent_count: number }>> {
  const inScope = scope === null ? sql`true` : inScopeSql('a.customer_id', scope);
  const { rows } = await sql<{ tag: string; agent_count: number }>`
    select min(t.tag collate "C") as tag, count(*)::int4 as agent_count
    from agents as a cross join lateral unnest(a.tags, a.tag_keys) as t(tag, key)
    where ${inScope}
    group by t.key
    order by natural_sort_key(t.key) collate "C", t.key collate "C"`.execute(db);
  return rows;
}

/** Everything the agent owns goes with it through foreign keys (events, metrics, backups, ...). */
export async function deleteAgent(db: Db, id: string): Promise<void> {
  await db.deleteFrom('agents').where('id', '=', id).execute();
}

/** The owning customer of each of `ids` that exists (the socket upgrade's check, batched). */
export function findAgentCustomers(db: Db, ids: readonly string[]): Promise<Array<{ id: string; customer_id: number | null }>> {
  // `= any(array)`: one statement text for any number of ids.
  return db.selectFrom('agents').select(['id', 'customer_id']).where(sql<boolean>`id = any(${[...ids]}::text[])`).execute();
}
