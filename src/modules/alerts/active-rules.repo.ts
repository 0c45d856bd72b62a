// The rules the evaluators work from: enabled rules of a kind with their params parsed (defaults
// applied), the channels a rule notifies (enabled ones only), and the scope condition that picks a
// rule's agents in SQL.
import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import type { AlertRuleKind, Database } from '../../db/schema.js';
import { parseRuleParams, type RuleParams } from './rule-params.js';

type Db = Kysely<Database>;

export interface ActiveRule<K extends AlertRuleKind = AlertRuleKind> {
  id: number;
  name: string;
  kind: K;
  customer_id: number | null;
  agent_id: string | null;
  params: RuleParams[K];
  reminder_minutes: number | null;
}

/** Enabled rules of one kind; a rule whose stored params no longer parse is skipped (and reported by `broken`). */
export async function enabledRules<K extends AlertRuleKind>(db: Db, kind: K, broken?: (ruleId: number, err: unknown) => void): Promise<Array<ActiveRule<K>>> {
  const rows = await db
    .selectFrom('alert_rules')
    .select(['id', 'name', 'kind', 'customer_id', 'agent_id', 'params', 'reminder_minutes'])
    .where('kind', '=', kind)
    .where('enabled', '=', true)
    .orderBy('id')
    .execute();
  const rules: Array<ActiveRule<K>> = [];
  for (const row of rows) {
    try {
      rules.push({ ...row, kind, params: parseRuleParams(kind, row.params) });
    } catch (err) {
      broken?.(row.id, err);
    }
  }
  return rules;
}

export async function findRule(db: Db, id: number): Promise<ActiveRule | undefined> {
  const row = await db.selectFrom('alert_rules').select(['id', 'name', 'kind', 'customer_id', 'agent_id', 'params', 'reminder_minutes']).where('id', '=', id).executeTakeFirst();
  return row ? { ...row, params: parseRuleParams(row.kind, row.params) } : undefined;
}

/** The enabled channels each rule notifies, by rule (a rule with none is absent). */
export async function channelsOfRules(db: Db, ruleIds: readonly number[]): Promise<Map<number, number[]>> {
  const channels = new Map<number, number[]>();
  if (ruleIds.length === 0) return channels;
  const rows = await db
    .selectFrom('alert_rule_channels as rc')
    .innerJoin('notification_channels as c', 'c.id', 'rc.channel_id')
    .select(['rc.rule_id', 'c.id'])
    .where('rc.rule_id', 'in', ruleIds)
    .where('c.enabled', '=', true)
    .orderBy('c.id')
    .execute();
  for (const r of rows) channels.set(r.rule_id, [...(channels.get(r.rule_id) ?? []), r.id]);
  return channels;
}

/** `agents as a` rows the rule covers: its agent, its customer's agents, or all. */
export function coversAgent(rule: Pick<ActiveRule, 'agent_id' | 'customer_id'>, alias = 'a'): RawBuilder<SqlBool> {
  const a = sql.raw(alias);
  if (rule.agent_id !== null) return sql<SqlBool>`${a}.id = ${rule.agent_id}`;
  if (rule.customer_id !== null) return sql<SqlBool>`${a}.customer_id = ${rule.customer_id}`;
  return sql<SqlBool>`true`;
}

/** The same test in memory, for the heartbeat path. */
export function ruleCovers(rule: Pick<ActiveRule, 'agent_id' | 'customer_id'>, agent: { id: string; customer_id: number | null }): boolean {
  if (rule.agent_id !== null) return rule.agent_id === agent.id;
  return rule.customer_id === null || rule.customer_id === agent.customer_id;
}
