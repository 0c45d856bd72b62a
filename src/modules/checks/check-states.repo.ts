// SQL of checks' states, their history, agents' overrides and the fleet's failing checks.
import { sql, type Kysely, type Selectable } from 'kysely';
import { keyColumn, keyset, keysetPage, newestFirst, toPage } from '../../db/keyset.js';
import type { CheckStatesTable, Database } from '../../db/schema.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { inScopeSql, type CustomerScope } from '../auth/caller.js';

type Db = Kysely<Database>;
export type CheckStateRow = Selectable<CheckStatesTable>;

const HISTORY_ORDER = newestFirst('at', 'id');
/** Failing checks: the worst state first, then the longest failing, then by agent and check. */
const FAILING_ORDER = keyset([keyColumn(sql`(- s.state)`, 'int4'), keyColumn('s.last_change_at', 'timestamptz'), keyColumn('s.agent_id', 'text'), keyColumn('s.check_id', 'text')]);

export async function statesOf(db: Db, agentId: string): Promise<Map<string, CheckStateRow>> {
  const rows = await db.selectFrom('check_states').selectAll().where('agent_id', '=', agentId).execute();
  return new Map(rows.map((r) => [r.check_id, r]));
}

export async function historyOf(db: Db, agentId: string, checkId: string, page: PageRequest) {
  const query = db.selectFrom('check_state_history').select(['id', 'state', 'output', 'at']).where('agent_id', '=', agentId).where('check_id', '=', checkId);
  return toPage(await keysetPage(query, HISTORY_ORDER, page).execute(), page.limit);
}

export async function overridesList(db: Db, agentId: string) {
  return db
    .selectFrom('agent_check_overrides as o')
    .innerJoin('policy_checks as c', 'c.id', 'o.check_id')
    .select(['o.check_id', 'c.name as check_name', 'o.excluded', 'o.params', 'o.interval_seconds', 'o.updated_at'])
    .where('o.agent_id', '=', agentId)
    .orderBy('c.name')
    .execute();
}

export interface FailingCheck {
  agent_id: string;
  agent_name: string;
  customer_id: number | null;
  customer_name: string | null;
  check_id: string;
  check_name: string;
  policy_id: number;
  policy_name: string;
  state: number;
  output: string;
  last_run_at: Date;
  last_change_at: Date;
}

/** Checks not OK, of checks that still exist, on agents within the scope. */
export async function failingChecks(db: Db, filter: { scope: CustomerScope; customerId?: number | undefined }, page: PageRequest): Promise<Page<FailingCheck>> {
  let query = db
    .selectFrom('check_states as s')
    .innerJoin('agents as a', 'a.id', 's.agent_id')
    .innerJoin('policy_checks as c', 'c.id', 's.check_id')
    .innerJoin('check_policies as p', 'p.id', 'c.policy_id')
    .leftJoin('customers as cu', 'cu.id', 'a.customer_id')
    .select([
      's.agent_id',
      'a.name as agent_name',
      'a.customer_id',
      'cu.name as customer_name',
      's.check_id',
      'c.name as check_name',
      'p.id as policy_id',
      'p.name as policy_name',
      's.state',
      's.output',
      's.last_run_at',
      's.last_change_at',
    ])
    .where('s.state', '>', 0);
  if (filter.scope !== null) query = query.where(inScopeSql('a.customer_id', filter.scope));
  if (filter.customerId !== undefined) query = query.where('a.customer_id', '=', filter.customerId);
  return toPage(await keysetPage(query, FAILING_ORDER, page).execute(), page.limit);
}
