// The SQL that names the objects of audit entries (audit-targets.ts): one query per kind for a whole
// batch of entries. Integer ids are checked before they reach a query, since an id is whatever text the
// caller put in the path; an id that names nothing reads as the kind and the id ("agent abc").
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { bounded, KIND_LABEL, type TargetKind, type TargetRef } from './audit-targets.js';

type Namer = (db: Kysely<Database>, ids: string[]) => Promise<Map<string, string>>;

const numeric = (ids: string[]) => ids.filter((id) => /^[1-9][0-9]{0,15}$/.test(id)).map(Number).filter(Number.isSafeInteger);

/** One id column, one label per row. */
function byNumber<T extends { id: number }>(fetch: (db: Kysely<Database>, ids: number[]) => Promise<T[]>, label: (row: T) => string): Namer {
  return async (db, ids) => {
    const wanted = numeric(ids);
    if (wanted.length === 0) return new Map();
    return new Map((await fetch(db, wanted)).map((row) => [String(row.id), label(row)]));
  };
}

const NAMERS: Partial<Record<TargetKind, Namer>> = {
  agent: async (db, ids) => {
    ids = ids.filter((id) => id === bounded(id));
    if (ids.length === 0) return new Map();
    const rows = await db
      .selectFrom('agents as a')
      .leftJoin('customers as c', 'c.id', 'a.customer_id')
      .select(['a.id', 'a.name', 'c.name as customer'])
      .where('a.id', 'in', ids)
      .execute();
    return new Map(rows.map((r) => [r.id, r.customer ? `agent ${r.name} (${r.customer})` : `agent ${r.name}`]));
  },
  customer: byNumber(
    (db, ids) => db.selectFrom('customers').select(['id', 'number', 'name']).where('id', 'in', ids).execute(),
    (r) => `customer ${r.number} ${r.name}`,
  ),
  user: byNumber((db, ids) => db.selectFrom('users').select(['id', 'username']).where('id', 'in', ids).execute(), (r) => `user ${r.username}`),
  task: byNumber(
    (db, ids) => db.selectFrom('tasks').select(['id', 'name', 'kind']).where('id', 'in', ids).execute(),
    (r) => `task ${r.name || r.kind} (#${r.id})`,
  ),
  // The name and hint only: the hint is what the log already shows as an API key's actor.
  api_key: byNumber(
    (db, ids) => db.selectFrom('api_keys').select(['id', 'name', 'key_hint']).where('id', 'in', ids).execute(),
    (r) => `API key ${r.name} (${r.key_hint})`,
  ),
  firmware: byNumber(
    (db, ids) => db.selectFrom('firmware').select(['id', 'version', 'platform']).where('id', 'in', ids).execute(),
    (r) => `firmware ${r.version} (${r.platform})`,
  ),
  alert_rule: byNumber((db, ids) => db.selectFrom('alert_rules').select(['id', 'name']).where('id', 'in', ids).execute(), (r) => `alert rule ${r.name}`),
  alert: byNumber(
    (db, ids) => db.selectFrom('alerts').select(['id', 'rule_name']).where('id', 'in', ids).execute(),
    (r) => `alert #${r.id} (${r.rule_name})`,
  ),
  notification_channel: byNumber(
    (db, ids) => db.selectFrom('notification_channels').select(['id', 'name']).where('id', 'in', ids).execute(),
    (r) => `notification channel ${r.name}`,
  ),
  maintenance_window: byNumber(
    (db, ids) => db.selectFrom('maintenance_windows').select(['id', 'name']).where('id', 'in', ids).execute(),
    (r) => `maintenance window ${r.name}`,
  ),
  script: byNumber((db, ids) => db.selectFrom('scripts').select(['id', 'name']).where('id', 'in', ids).execute(), (r) => `script ${r.name}`),
  bulk_action: byNumber(
    (db, ids) => db.selectFrom('bulk_actions').select(['id', 'action']).where('id', 'in', ids).execute(),
    (r) => `bulk action #${r.id} (${r.action})`,
  ),
};

const keyOf = (ref: TargetRef) => `${ref.kind}\u0000${ref.id}`;

/** Each reference's label, keyed by kind and id (see labelOf). */
export async function nameTargets(db: Kysely<Database>, refs: readonly TargetRef[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const byKind = new Map<TargetKind, Set<string>>();
  for (const ref of refs) byKind.set(ref.kind, (byKind.get(ref.kind) ?? new Set()).add(ref.id));
  for (const [kind, ids] of byKind) {
    const found = (await NAMERS[kind]?.(db, [...ids])) ?? new Map<string, string>();
    for (const id of ids) names.set(keyOf({ kind, id }), bounded(found.get(id) ?? `${KIND_LABEL[kind]} ${id}`));
  }
  return names;
}

export const labelOf = (names: Map<string, string>, ref: TargetRef): string => names.get(keyOf(ref)) ?? bounded(`${KIND_LABEL[ref.kind]} ${ref.id}`);
