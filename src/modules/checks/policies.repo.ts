// All SQL of check policies and overrides. Every change raises checks_revision in its transaction, so each
// instance of a cluster learns that its agents' sets must be computed again.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { keyColumn, keyset, keysetPage, toPage } from '../../db/keyset.js';
import type { CheckPoliciesTable, Database, PolicyChecksTable } from '../../db/schema.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import type { PolicyBody } from './policies.schemas.js';
import type { CheckOverride, PolicyForAgents } from './effective-checks.js';

type Db = Kysely<Database>;
export type PolicyRow = Selectable<CheckPoliciesTable>;
export type PolicyCheckRow = Selectable<PolicyChecksTable>;
export interface StoredPolicy extends PolicyRow {
  checks: PolicyCheckRow[];
  agent_count: number;
}

const BY_NAME = keyset([keyColumn(sql`lower(name)`, 'text'), keyColumn('id', 'int4')]);

export async function bumpRevision(db: Db | Transaction<Database>): Promise<void> {
  await db.updateTable('checks_revision').set({ revision: sql`revision + 1` }).where('id', '=', 1).execute();
}

export async function currentRevision(db: Db): Promise<string> {
  const row = await db.selectFrom('checks_revision').select('revision').where('id', '=', 1).executeTakeFirstOrThrow();
  return String(row.revision);
}

/** The agents a policy covers, by the rule of effective-checks.ts's policyApplies, in SQL. */
async function agentCount(db: Db, p: PolicyRow, scope: readonly number[] | null): Promise<number> {
  if (p.customer_ids.length === 0 && p.tags.length === 0 && p.platforms.length === 0) return 0;
  let q = db.selectFrom('agents').select((eb) => eb.fn.countAll<string | number>().as('n'));
  if (p.customer_ids.length > 0) q = q.where('customer_id', 'in', p.customer_ids);
  if (p.tags.length > 0) q = q.where(sql<boolean>`tag_keys && ${sql.val(p.tags)}::text[]`);
  if (p.platforms.length > 0) q = q.where('platform', 'in', p.platforms as never[]);
  if (scope !== null) q = scope.length === 0 ? q.where(sql<boolean>`false`) : q.where('customer_id', 'in', scope);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

async function withChecks(db: Db, rows: PolicyRow[], scope: readonly number[] | null): Promise<StoredPolicy[]> {
  if (rows.length === 0) return [];
  const checks = await db.selectFrom('policy_checks').selectAll().where('policy_id', 'in', rows.map((r) => r.id)).orderBy('position').execute();
  return Promise.all(rows.map(async (r) => ({ ...r, checks: checks.filter((c) => c.policy_id === r.id), agent_count: await agentCount(db, r, scope) })));
}

export async function listPolicies(db: Db, page: PageRequest, scope: readonly number[] | null): Promise<Page<StoredPolicy>> {
  const found = toPage(await keysetPage(db.selectFrom('check_policies').selectAll(), BY_NAME, page).execute(), page.limit);
  return { ...found, items: await withChecks(db, found.items, scope) };
}

export async function findPolicy(db: Db, id: number, scope: readonly number[] | null): Promise<StoredPolicy | undefined> {
  const row = await db.selectFrom('check_policies').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? (await withChecks(db, [row], scope))[0] : undefined;
}

/** Inserts or replaces a policy and its checks; checks that name an id of this policy keep it. */
export async function savePolicy(db: Db, id: number | null, body: PolicyBody, now: Date): Promise<number | undefined> {
  return db.transaction().execute(async (trx) => {
    const values = {
      name: body.name,
      name_key: body.name.toLowerCase(),
      description: body.description,
      enabled: body.enabled,
      customer_ids: [...new Set(body.customer_ids)],
      tags: [...new Set(body.tags.map((t) => t.toLowerCase()))],
      platforms: [...new Set(body.platforms)],
      updated_at: now,
    };
    let policyId = id;
    if (policyId === null) {
      policyId = (await trx.insertInto('check_policies').values({ ...values, created_at: now }).returning('id').executeTakeFirstOrThrow()).id;
    } else {
      const updated = await trx.updateTable('check_policies').set(values).where('id', '=', policyId).returning('id').executeTakeFirst();
      if (!updated) return undefined;
    }
    const existing = new Set((await trx.selectFrom('policy_checks').select('id').where('policy_id', '=', policyId).execute()).map((r) => r.id));
    const kept = body.checks.flatMap((c) => (c.id && existing.has(c.id) ? [c.id] : []));
    await forgetChecks(trx, [...existing].filter((checkId) => !kept.includes(checkId)));
    for (const [position, c] of body.checks.entries()) {
      const row = { policy_id: policyId, position, name: c.name, kind: c.kind, params: JSON.stringify(c.params), interval_seconds: c.interval_seconds, timeout_seconds: c.timeout_seconds, enabled: c.enabled };
      if (c.id && existing.has(c.id)) await trx.updateTable('policy_checks').set(row).where('id', '=', c.id).execute();
      // An id of another policy's check is not taken over: the check is new.
      else await trx.insertInto('policy_checks').values({ ...row, id: c.id && !(await idTaken(trx, c.id)) ? c.id : randomUUID() }).execute();
    }
    await bumpRevision(trx);
    return policyId;
  });
}

async function idTaken(trx: Transaction<Database>, id: string): Promise<boolean> {
  return (await trx.selectFrom('policy_checks').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** Removes checks with their states and history (overrides go by the foreign key). */
async function forgetChecks(trx: Transaction<Database>, checkIds: readonly string[]): Promise<void> {
  if (checkIds.length === 0) return;
  await trx.deleteFrom('check_states').where('check_id', 'in', checkIds).execute();
  await trx.deleteFrom('check_state_history').where('check_id', 'in', checkIds).execute();
  await trx.deleteFrom('policy_checks').where('id', 'in', checkIds).execute();
}

export async function deletePolicy(db: Db, id: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await forgetChecks(trx, (await trx.selectFrom('policy_checks').select('id').where('policy_id', '=', id).execute()).map((r) => r.id));
    const gone = await trx.deleteFrom('check_policies').where('id', '=', id).returning('id').executeTakeFirst();
    if (gone) await bumpRevision(trx);
    return gone !== undefined;
  });
}

/** Every policy with its checks, for computing agents' sets. */
export async function policiesForAgents(db: Db): Promise<PolicyForAgents[]> {
  const policies = await db.selectFrom('check_policies').selectAll().where('enabled', '=', true).orderBy('id').execute();
  if (policies.length === 0) return [];
  const checks = await db.selectFrom('policy_checks').selectAll().where('policy_id', 'in', policies.map((p) => p.id)).orderBy('position').execute();
  return policies.map((p) => ({
    id: p.id,
    name: p.name,
    enabled: p.enabled,
    customerIds: p.customer_ids,
    tags: p.tags,
    platforms: p.platforms,
    checks: checks
      .filter((c) => c.policy_id === p.id)
      .map((c) => ({ id: c.id, name: c.name, kind: c.kind as never, params: c.params, intervalSeconds: c.interval_seconds, timeoutSeconds: c.timeout_seconds, enabled: c.enabled })),
  }));
}

/** Overrides of the given agents, by agent and check. */
export async function overridesOf(db: Db, agentIds: readonly string[]): Promise<Map<string, Map<string, CheckOverride>>> {
  const byAgent = new Map<string, Map<string, CheckOverride>>();
  if (agentIds.length === 0) return byAgent;
  const rows = await db.selectFrom('agent_check_overrides').selectAll().where('agent_id', 'in', agentIds).execute();
  for (const r of rows) {
    const map = byAgent.get(r.agent_id) ?? new Map<string, CheckOverride>();
    map.set(r.check_id, { checkId: r.check_id, excluded: r.excluded, params: r.params, intervalSeconds: r.interval_seconds });
    byAgent.set(r.agent_id, map);
  }
  return byAgent;
}

export async function findCheck(db: Db, checkId: string): Promise<PolicyCheckRow | undefined> {
  return db.selectFrom('policy_checks').selectAll().where('id', '=', checkId).executeTakeFirst();
}

export async function saveOverride(db: Db, agentId: string, checkId: string, o: Omit<CheckOverride, 'checkId'>, now: Date): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const row = { excluded: o.excluded, params: JSON.stringify(o.params), interval_seconds: o.intervalSeconds, updated_at: now };
    await trx
      .insertInto('agent_check_overrides')
      .values({ agent_id: agentId, check_id: checkId, ...row })
      .onConflict((oc) => oc.columns(['agent_id', 'check_id']).doUpdateSet(row))
      .execute();
    await bumpRevision(trx);
  });
}

export async function deleteOverride(db: Db, agentId: string, checkId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const gone = await trx.deleteFrom('agent_check_overrides').where('agent_id', '=', agentId).where('check_id', '=', checkId).returning('check_id').executeTakeFirst();
    if (gone) await bumpRevision(trx);
    return gone !== undefined;
  });
}

/** Whether any policy's check runs library script `scriptId` (its set then changes with the script). */
export async function policiesUseScript(db: Db, scriptId: number): Promise<boolean> {
  const row = await db
    .selectFrom('policy_checks')
    .select('id')
    .where(sql<boolean>`params->>'script_id' = ${String(scriptId)}`)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
