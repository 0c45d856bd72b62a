// All SQL of agents, except the heartbeat batch write (heartbeat-writer.ts) and events (events.repo.ts).
import { sql, type Kysely, type Selectable } from 'kysely';
import type { AgentsTable, Database, Platform } from '../../db/schema.js';
import type { CustomerScope } from '../auth/caller.js';
import { heartbeatWindow, type AgentStatus } from './agent-status.js';

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
] as const;

/** An agent without its system data (read separately, as text) and the monitor's bookkeeping. */
export type AgentRow = Omit<Selectable<AgentsTable>, 'system' | 'last_status'>;

export interface AgentFilter {
  scope: CustomerScope;
  customerId?: number | undefined;
  status?: AgentStatus | undefined;
  platform?: Platform | undefined;
  q?: string | undefined;
  now: Date;
}

export function listAgents(db: Db, f: AgentFilter): Promise<AgentRow[]> {
  let query = db.selectFrom('agents').select(AGENT_COLUMNS);
  if (f.scope !== null) query = query.where('customer_id', '=', f.scope);
  if (f.customerId !== undefined) query = query.where('customer_id', '=', f.customerId);
  if (f.platform !== undefined) query = query.where('platform', '=', f.platform);
  if (f.q) {
    const pattern = `%${f.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((eb) => eb.or([eb('name', 'ilike', pattern), eb('hostname', 'ilike', pattern)]));
  }
  if (f.status === 'unknown') query = query.where('last_heartbeat', 'is', null);
  else if (f.status) {
    const w = heartbeatWindow(f.status, f.now);
    if (w.after) query = query.where('last_heartbeat', '>', w.after);
    if (w.atOrAfter) query = query.where('last_heartbeat', '>=', w.atOrAfter);
    if (w.before) query = query.where('last_heartbeat', '<', w.before);
    if (w.atOrBefore) query = query.where('last_heartbeat', '<=', w.atOrBefore);
  }
  return query.orderBy('name').orderBy('id').execute();
}

/** Which of these agents belong to the customer. */
export async function agentIdsOfCustomer(db: Db, customerId: number, ids: readonly string[]): Promise<string[]> {
  const rows = await db.selectFrom('agents').select('id').where('customer_id', '=', customerId).where('id', 'in', [...ids]).execute();
  return rows.map((r) => r.id);
}

export function findAgent(db: Db, id: string): Promise<AgentRow | undefined> {
  return db.selectFrom('agents').select(AGENT_COLUMNS).where('id', '=', id).executeTakeFirst();
}

/** The stored heartbeat exactly as received (null before the first heartbeat). */
export async function findSystemText(db: Db, id: string): Promise<{ customer_id: number | null; system: string | null } | undefined> {
  return db
    .selectFrom('agents')
    .select(['customer_id', 'system'])
    .where('id', '=', id)
    .executeTakeFirst();
}

export function insertAgent(
  db: Db,
  values: { id: string; name: string; hostname: string; customer_id: number | null; platform?: Platform; agent_version?: string | null },
): Promise<AgentRow> {
  return db.insertInto('agents').values(values).returning(AGENT_COLUMNS).executeTakeFirstOrThrow();
}

export function findPendingByName(db: Db, name: string, scope: CustomerScope) {
  return db
    .selectFrom('agents')
    .select(AGENT_COLUMNS)
    .where('hostname', '=', PENDING_HOSTNAME)
    .where('name', '=', name)
    .$if(scope !== null, (q) => q.where('customer_id', '=', scope))
    .forUpdate()
    .executeTakeFirst();
}

export function updateRegistration(
  db: Db,
  id: string,
  values: { hostname: string; platform: Platform; agent_version?: string | null | undefined },
): Promise<AgentRow> {
  return db
    .updateTable('agents')
    .set({ hostname: values.hostname, platform: values.platform, ...(values.agent_version ? { agent_version: values.agent_version } : {}) })
    .where('id', '=', id)
    .returning(AGENT_COLUMNS)
    .executeTakeFirstOrThrow();
}

export function setAgentCustomer(db: Db, id: string, customerId: number | null): Promise<AgentRow | undefined> {
  return db.updateTable('agents').set({ customer_id: customerId }).where('id', '=', id).returning(AGENT_COLUMNS).executeTakeFirst();
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
