// All SQL of alert rules and the channels each names. A rule row comes with its channel ids (in id
// order) and the customer it belongs to (its own, or its agent's), which scope checks and list
// filters use.
import { sql, type Kysely } from 'kysely';
import { keyColumn, keyset, keysetPage, toPage } from '../../db/keyset.js';
import type { AlertRuleKind, Database } from '../../db/schema.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { inScopeSql, type CustomerScope } from '../auth/caller.js';

type Db = Kysely<Database>;

export interface RuleRow {
  id: number;
  name: string;
  kind: AlertRuleKind;
  enabled: boolean;
  customer_id: number | null;
  agent_id: string | null;
  params: Record<string, unknown>;
  reminder_minutes: number | null;
  created_at: Date;
  updated_at: Date;
  channel_ids: number[];
  /** The rule's customer, or its agent's; null for global rules and rules of unassigned agents. */
  owner_customer_id: number | null;
}

export interface RuleValues {
  name: string;
  kind: AlertRuleKind;
  enabled: boolean;
  customer_id: number | null;
  agent_id: string | null;
  params: Record<string, unknown>;
  reminder_minutes: number | null;
}

export interface RuleFilter {
  /** A scoped caller's customer: its rules, its agents' rules and the global ones. */
  scope: CustomerScope;
  /** Rules of this customer: its own and its agents'. */
  customerId?: number | undefined;
  agentId?: string | undefined;
  kind?: AlertRuleKind | undefined;
  enabled?: boolean | undefined;
}

const BY_ID = keyset([keyColumn('r.id', 'int4')]);

function rules(db: Db) {
  return db
    .selectFrom('alert_rules as r')
    .leftJoin('agents as a', 'a.id', 'r.agent_id')
    .select([
      'r.id',
      'r.name',
      'r.kind',
      'r.enabled',
      'r.customer_id',
      'r.agent_id',
      'r.params',
      'r.reminder_minutes',
      'r.created_at',
      'r.updated_at',
      sql<number[]>`coalesce((select json_agg(c.channel_id order by c.channel_id) from alert_rule_channels c where c.rule_id = r.id), '[]'::json)`.as('channel_ids'),
      sql<number | null>`coalesce(r.customer_id, a.customer_id)`.as('owner_customer_id'),
    ]);
}

export async function listRules(db: Db, f: RuleFilter, page: PageRequest): Promise<Page<RuleRow>> {
  const query = rules(db)
    .$if(f.scope !== null, (q) => q.where(sql<boolean>`(${inScopeSql(sql`coalesce(r.customer_id, a.customer_id)`, f.scope!)} or (r.customer_id is null and r.agent_id is null))`))
    .$if(f.customerId !== undefined, (q) => q.where(sql<boolean>`coalesce(r.customer_id, a.customer_id) = ${f.customerId}`))
    .$if(f.agentId !== undefined, (q) => q.where('r.agent_id', '=', f.agentId!))
    .$if(f.kind !== undefined, (q) => q.where('r.kind', '=', f.kind!))
    .$if(f.enabled !== undefined, (q) => q.where('r.enabled', '=', f.enabled!));
  return toPage(await keysetPage(query, BY_ID, page).execute(), page.limit);
}

export function findRule(db: Db, id: number): Promise<RuleRow | undefined> {
  return rules(db).where('r.id', '=', id).executeTakeFirst();
}

export async function insertRule(db: Db, values: RuleValues, now: Date): Promise<number> {
  const row = await db
    .insertInto('alert_rules')
    .values({ ...values, params: JSON.stringify(values.params), created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Replaces the rule's fields; false when it no longer exists. */
export async function updateRule(db: Db, id: number, values: RuleValues, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('alert_rules')
    .set({ ...values, params: JSON.stringify(values.params), updated_at: now })
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function replaceRuleChannels(db: Db, ruleId: number, channelIds: readonly number[]): Promise<void> {
  await db.deleteFrom('alert_rule_channels').where('rule_id', '=', ruleId).execute();
  if (channelIds.length === 0) return;
  await db
    .insertInto('alert_rule_channels')
    .values(channelIds.map((channel_id) => ({ rule_id: ruleId, channel_id })))
    .execute();
}

export async function deleteRule(db: Db, id: number): Promise<void> {
  await db.deleteFrom('alert_rules').where('id', '=', id).execute();
}

/** The channels among `ids` that exist, with their customer. */
export function findChannels(db: Db, ids: readonly number[]): Promise<Array<{ id: number; customer_id: number | null }>> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('notification_channels').select(['id', 'customer_id']).where('id', 'in', [...ids]).execute();
}
