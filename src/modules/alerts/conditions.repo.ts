// The running state of threshold rules (alert_conditions): since when an agent's samples cross a rule's
// threshold, and since when they are back past its recovery threshold. Written only when it changes.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

type Db = Kysely<Database>;

export async function saveCondition(db: Db, ruleId: number, agentId: string, label: string, breaching: Date | null, clearing: Date | null): Promise<void> {
  await db
    .insertInto('alert_conditions')
    .values({ rule_id: ruleId, agent_id: agentId, label, breaching_since: breaching, clearing_since: clearing })
    .onConflict((oc) => oc.columns(['rule_id', 'agent_id', 'label']).doUpdateSet({ breaching_since: breaching, clearing_since: clearing }))
    // The agent or rule may have been deleted meanwhile: nothing to keep then.
    .execute()
    .catch((err: unknown) => {
      if ((err as { code?: string }).code !== '23503') throw err;
    });
}

export async function deleteCondition(db: Db, ruleId: number, agentId: string, label: string): Promise<void> {
  await db.deleteFrom('alert_conditions').where('rule_id', '=', ruleId).where('agent_id', '=', agentId).where('label', '=', label).execute();
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
