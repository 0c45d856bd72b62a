// All SQL of alerts (incidents): firing one (the partial unique index keeps one open per rule, agent
// and label, so a repeated evaluation or a second instance cannot fire twice), acknowledging,
// resolving, the lists and the badge's summary, and the context a notification names (agent, customer).
import { sql, type Kysely, type Selectable } from 'kysely';
import { keyColumn, keyset, keysetPage, toPage } from '../../db/keyset.js';
import type { AlertsTable, Database } from '../../db/schema.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { inScopeSql, type CustomerScope } from '../auth/caller.js';

type Db = Kysely<Database>;

export type AlertRow = Selectable<AlertsTable>;
export type AlertView = AlertRow & { agent_name: string; hostname: string; customer_id: number | null };

export interface NewAlert {
  rule_id: number;
  rule_name: string;
  kind: string;
  agent_id: string;
  label: string;
  suppressed: boolean;
  summary: string;
  value: number | null;
  threshold: number | null;
  since: Date;
  fired_at: Date;
  next_reminder_at: Date | null;
}

/** Inserts alerts; returns those inserted (a row whose rule, agent and label already has an open alert is skipped). */
export async function insertAlerts(db: Db, alerts: readonly NewAlert[]): Promise<AlertRow[]> {
  if (alerts.length === 0) return [];
  const values = alerts.map(
    (a) => sql`(${a.rule_id}::int, ${a.rule_name}::text, ${a.kind}::text, ${a.agent_id}::text, ${a.label}::text, 'firing', ${a.suppressed}::boolean,
      ${a.summary}::text, ${a.value}::float8, ${a.threshold}::float8, ${a.since}::timestamptz, ${a.fired_at}::timestamptz, ${a.next_reminder_at}::timestamptz)`,
  );
  const { rows } = await sql<AlertRow>`
    insert into alerts (rule_id, rule_name, kind, agent_id, label, state, suppressed, summary, value, threshold, since, fired_at, next_reminder_at)
    values ${sql.join(values)}
    on conflict (rule_id, agent_id, label) where state <> 'resolved' do nothing
    returning *`.execute(db);
  return rows;
}

/** Ids per statement: a mass recovery resolves 10,000s, and a statement takes at most 65,535 parameters. */
const ID_CHUNK = 5_000;

/** Resolves open alerts; returns those it resolved (already resolved ones are left alone). */
export async function resolveAlerts(db: Db, ids: readonly number[], at: Date, by: string | null, comment: string | null): Promise<AlertRow[]> {
  const resolved: AlertRow[] = [];
  for (let i = 0; i < ids.length; i += ID_CHUNK) {
    const rows = await db
      .updateTable('alerts')
      .set({ state: 'resolved', resolved_at: at, resolved_by: by, resolve_comment: comment, next_reminder_at: null })
      .where('id', 'in', ids.slice(i, i + ID_CHUNK))
      .where('state', '<>', 'resolved')
      .returningAll()
      .execute();
    resolved.push(...rows);
  }
  return resolved;
}

/** An open alert's identity: one per rule, agent and label (the partial unique index). */
export interface AlertKey {
  ruleId: number;
  agentId: string;
  label: string;
}

/** Resolves the open alerts with these keys automatically; returns those it resolved. */
export async function resolveOpenAlerts(db: Db, keys: readonly AlertKey[], at: Date): Promise<AlertRow[]> {
  if (keys.length === 0) return [];
  const { rows } = await sql<AlertRow>`
    update alerts as al set state = 'resolved', resolved_at = ${at}, next_reminder_at = null
    from unnest(${keys.map((k) => k.ruleId)}::int[], ${keys.map((k) => k.agentId)}::text[], ${keys.map((k) => k.label)}::text[]) as k(rule_id, agent_id, label)
    where al.rule_id = k.rule_id and al.agent_id = k.agent_id and al.label = k.label and al.state <> 'resolved'
    returning al.*`.execute(db);
  return rows;
}

/** Acknowledges a firing alert (no more reminders); undefined when it is not firing. */
export function acknowledgeAlert(db: Db, id: number, at: Date, by: string, comment: string | null): Promise<AlertRow | undefined> {
  return db
    .updateTable('alerts')
    .set({ state: 'acknowledged', acknowledged_at: at, acknowledged_by: by, ack_comment: comment, next_reminder_at: null })
    .where('id', '=', id)
    .where('state', '=', 'firing')
    .returningAll()
    .executeTakeFirst();
}

/** Open alerts of one rule: (agent, label) → id, for reconciling a rule's findings. */
export async function openAlertsOfRule(db: Db, ruleId: number): Promise<Map<string, AlertRow>> {
  const rows = await db.selectFrom('alerts').selectAll().where('rule_id', '=', ruleId).where('state', '<>', 'resolved').execute();
  return new Map(rows.map((r) => [openKey(r.agent_id, r.label), r]));
}

export const openKey = (agentId: string, label: string) => `${agentId}\u0000${label}`;

export function findOpenAlert(db: Db, ruleId: number, agentId: string, label: string): Promise<AlertRow | undefined> {
  return db
    .selectFrom('alerts')
    .selectAll()
    .where('rule_id', '=', ruleId)
    .where('agent_id', '=', agentId)
    .where('label', '=', label)
    .where('state', '<>', 'resolved')
    .executeTakeFirst();
}

/** Open alerts of disabled rules, by rule (a disabled rule is not evaluated, so they would never clear). */
export async function openAlertsOfDisabledRules(db: Db): Promise<Map<number, AlertRow[]>> {
  const rows = await db
    .selectFrom('alerts as al')
    .innerJoin('alert_rules as r', 'r.id', 'al.rule_id')
    .selectAll('al')
    .where('r.enabled', '=', false)
    .where('al.state', '<>', 'resolved')
    .execute();
  const byRule = new Map<number, AlertRow[]>();
  for (const row of rows) byRule.set(row.rule_id!, [...(byRule.get(row.rule_id!) ?? []), row]);
  return byRule;
}

/** Firing alerts whose reminder is due (rules with reminders only; suppressed ones never remind). */
export function dueReminders(db: Db, now: Date, limit = 500) {
  return db
    .selectFrom('alerts as al')
    .innerJoin('alert_rules as r', 'r.id', 'al.rule_id')
    .selectAll('al')
    .select('r.reminder_minutes')
    .where('al.state', '=', 'firing')
    .where('al.suppressed', '=', false)
    .where('al.next_reminder_at', '<=', now)
    .where('r.reminder_minutes', 'is not', null)
    .limit(limit)
    .execute();
}

export async function setNextReminder(db: Db, id: number, at: Date | null): Promise<void> {
  await db.updateTable('alerts').set({ next_reminder_at: at }).where('id', '=', id).execute();
}

export async function setDeliveryError(db: Db, alertIds: readonly number[], error: string | null): Promise<void> {
  if (alertIds.length === 0) return;
  await db.updateTable('alerts').set({ delivery_error: error }).where('id', 'in', alertIds).execute();
}

export interface AlertFilter {
  scope: CustomerScope;
  state?: 'open' | 'firing' | 'acknowledged' | 'resolved' | undefined;
  customerId?: number | undefined;
  agentId?: string | undefined;
  ruleId?: number | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

/** Open alerts first (firing, then acknowledged), then resolved; newest first within each. */
const OPEN_FIRST = keyset(
  [
    keyColumn(sql`(case al.state when 'firing' then 2 when 'acknowledged' then 1 else 0 end)`, 'int4'),
    keyColumn('al.fired_at', 'timestamptz'),
    keyColumn('al.id', 'int8'),
  ],
  true,
);

function viewQuery(db: Db) {
  return db
    .selectFrom('alerts as al')
    .innerJoin('agents as a', 'a.id', 'al.agent_id')
    .selectAll('al')
    .select(['a.name as agent_name', 'a.hostname', 'a.customer_id']);
}

export async function listAlerts(db: Db, f: AlertFilter, page: PageRequest): Promise<Page<AlertView>> {
  let q = viewQuery(db);
  if (f.scope !== null) q = q.where(inScopeSql('a.customer_id', f.scope));
  if (f.customerId !== undefined) q = q.where('a.customer_id', '=', f.customerId);
  if (f.agentId !== undefined) q = q.where('al.agent_id', '=', f.agentId);
  if (f.ruleId !== undefined) q = q.where('al.rule_id', '=', f.ruleId);
  if (f.state === 'open') q = q.where('al.state', '<>', 'resolved');
  else if (f.state !== undefined) q = q.where('al.state', '=', f.state);
  if (f.from !== undefined) q = q.where('al.fired_at', '>=', f.from);
  if (f.to !== undefined) q = q.where('al.fired_at', '<', f.to);
  return toPage(await keysetPage(q, OPEN_FIRST, page).execute(), page.limit);
}

export function findAlertView(db: Db, id: number): Promise<AlertView | undefined> {
  return viewQuery(db).where('al.id', '=', id).executeTakeFirst();
}

export async function alertSummary(db: Db, scope: CustomerScope): Promise<{ firing: number; acknowledged: number }> {
  let q = db
    .selectFrom('alerts as al')
    .innerJoin('agents as a', 'a.id', 'al.agent_id')
    .select(['al.state', (eb) => eb.fn.countAll<string>().as('n')])
    .where('al.state', '<>', 'resolved')
    .groupBy('al.state');
  if (scope !== null) q = q.where(inScopeSql('a.customer_id', scope));
  const rows = await q.execute();
  const count = (state: string) => Number(rows.find((r) => r.state === state)?.n ?? 0);
  return { firing: count('firing'), acknowledged: count('acknowledged') };
}

export interface AgentContext {
  id: string;
  name: string;
  hostname: string;
  customer: { id: number; number: string; name: string } | null;
}

/** What notifications name about each agent: its name, hostname and customer. */
export async function agentContexts(db: Db, agentIds: readonly string[]): Promise<Map<string, AgentContext>> {
  const ids = [...new Set(agentIds)];
  const rows = [];
  for (let i = 0; i < ids.length; i += ID_CHUNK) {
    rows.push(
      ...(await db
        .selectFrom('agents as a')
        .leftJoin('customers as c', 'c.id', 'a.customer_id')
        .select(['a.id', 'a.name', 'a.hostname', 'c.id as customer_id', 'c.number as customer_number', 'c.name as customer_name'])
        .where('a.id', 'in', ids.slice(i, i + ID_CHUNK))
        .execute()),
    );
  }
  return new Map(
    rows.map((r) => [
      r.id,
      {
        id: r.id,
        name: r.name,
        hostname: r.hostname,
        customer: r.customer_id === null ? null : { id: r.customer_id, number: r.customer_number ?? '', name: r.customer_name ?? '' },
      },
    ]),
  );
}
