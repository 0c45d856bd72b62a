// The running state of threshold rules (alert_conditions): since when an agent's samples cross a rule's
// threshold, and since when they are back past its recovery threshold. Written only when it changes,
// a heartbeat batch's changes in one statement.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

type Db = Kysely<Database>;

export interface ConditionRow {
  ruleId: number;
  agentId: string;
  label: string;
  breaching: Date | null;
  clearing: Date | null;
}

/** Rows per statement: 5 parameters a row, far below the protocol's 65,535. */
const CHUNK = 2_000;

/** Upserts the states in one statement per chunk; rows of an agent or rule deleted meanwhile are skipped. */
export async function saveConditions(db: Db, rows: readonly ConditionRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    const values = rows.slice(i, i + CHUNK).map((r) => sql`(${r.ruleId}::int, ${r.agentId}::text, ${r.label}::text, ${r.breaching}::timestamptz, ${r.clearing}::timestamptz)`);
    await sql`
      insert into alert_conditions (rule_id, agent_id, label, breaching_since, clearing_since)
      select v.rule_id, v.agent_id, v.label, v.breaching_since, v.clearing_since
      from (values ${sql.join(values)}) as v(rule_id, agent_id, label, breaching_since, clearing_since)
      join agents a on a.id = v.agent_id join alert_rules r on r.id = v.rule_id
      on conflict (rule_id, agent_id, label) do update set breaching_since = excluded.breaching_since, clearing_since = excluded.clearing_since`.execute(db);
  }
}

export async function deleteConditions(db: Db, keys: ReadonlyArray<Pick<ConditionRow, 'ruleId' | 'agentId' | 'label'>>): Promise<void> {
  for (let i = 0; i < keys.length; i += CHUNK) {
    const values = keys.slice(i, i + CHUNK).map((k) => sql`(${k.ruleId}::int, ${k.agentId}::text, ${k.label}::text)`);
    await sql`delete from alert_conditions where (rule_id, agent_id, label) in (values ${sql.join(values)})`.execute(db);
  }
}

/** The stored state of these rules, with whether each (rule, agent, label) has an open alert. */
export async function loadConditions(
  db: Db,
  ruleIds: readonly number[],
): Promise<Array<{ rule_id: number; agent_id: string; label: string; breaching_since: Date | null; clearing_since: Date | null; open: boolean }>> {
  if (ruleIds.length === 0) return [];
  const ids = sql.join(ruleIds);
  const { rows } = await sql<{ rule_id: number; agent_id: string; label: string; breaching_since: Date | null; clearing_since: Date | null; open: boolean }>`
    select rule_id, agent_id, label, c.breaching_since, c.clearing_since, al.id is not null as open
    from (select rule_id, agent_id, label, breaching_since, clearing_since from alert_conditions where rule_id in (${ids})) c
    full join (select rule_id, agent_id, label, id from alerts where state <> 'resolved' and rule_id in (${ids})) al
      using (rule_id, agent_id, label)`.execute(db);
  return rows;
}
