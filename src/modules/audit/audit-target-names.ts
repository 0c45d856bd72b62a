// The SQL that names the objects of audit entries (audit-targets.ts): one query per kind for a whole
// batch of entries. Integer ids are checked before they reach a query, since an id is whatever text the
// caller put in the path; an id that names nothing reads as the kind and the id ("agent abc"). Each
// name comes with the customer the object belongs to, if any, so that callers limited to customers see
// the entries about theirs (issue 35).
import { sql, type Kysely } from 'kysely';
import { compiledOnce } from '../../db/compiled-once.js';
import type { Database } from '../../db/schema.js';
import { bounded, KIND_LABEL, type TargetKind, type TargetRef } from './audit-targets.js';

/** A target as the log stores it: its label and the customer it belongs to (null: none, or unknown). */
export interface NamedTarget {
  label: string;
  customerId: number | null;
}

type Namer = (db: Kysely<Database>, ids: string[]) => Promise<Map<string, NamedTarget>>;

const numeric = (ids: string[]) => ids.filter((id) => /^[1-9][0-9]{0,15}$/.test(id)).map(Number).filter(Number.isSafeInteger);

/** One id column, one label per row; `customer_id` when the row has one. */
function byNumber<T extends { id: number; customer_id?: number | null }>(
  fetch: (db: Kysely<Database>, ids: number[]) => Promise<T[]>,
  label: (row: T) => string,
): Namer {
  return async (db, ids) => {
    const wanted = numeric(ids);
    if (wanted.length === 0) return new Map();
    return new Map((await fetch(db, wanted)).map((row) => [String(row.id), { label: label(row), customerId: row.customer_id ?? null }]));
  };
}

// Every command to an agent names it in its audit entry: one text for any number of ids (compiled-once.ts).
const agentNamesStatement = compiledOnce<Database, { ids: string[] }, { id: string; name: string; customer_id: number | null; customer: string | null }>((db, slot) =>
  db
    .selectFrom('agents as a')
    .leftJoin('customers as c', 'c.id', 'a.customer_id')
    .select(['a.id', 'a.name', 'a.customer_id', 'c.name as customer'])
    .where('a.id', '=', sql<string>`any(${slot('ids')}::text[])`),
);

const NAMERS: Partial<Record<TargetKind, Namer>> = {
  agent: async (db, ids) => {
    ids = ids.filter((id) => id === bounded(id));
    if (ids.length === 0) return new Map();
    const { rows } = await agentNamesStatement(db, { ids });
    return new Map(rows.map((r) => [r.id, { label: r.customer ? `agent ${r.name} (${r.customer})` : `agent ${r.name}`, customerId: r.customer_id }]));
  },
  customer: byNumber(
    (db, ids) => db.selectFrom('customers').select(['id', 'id as customer_id', 'number', 'name']).where('id', 'in', ids).execute(),
    (r) => `customer ${r.number} ${r.name}`,
  ),
  user: byNumber((db, ids) => db.selectFrom('users').select(['id', 'username']).where('id', 'in', ids).execute(), (r) => `user ${r.username}`),
  task: byNumber(
    (db, ids) =>
      db
        .selectFrom('tasks as t')
        .leftJoin('agents as a', 'a.id', 't.agent_id')
        .select(['t.id', 't.name', 't.kind', (eb) => eb.fn.coalesce('a.customer_id', 't.scope_customer_id').as('customer_id')])
        .where('t.id', 'in', ids)
        .execute(),
    (r) => `task ${r.name || r.kind} (#${r.id})`,
  ),
  // The name and hint only: the hint is what the log already shows as an API key's actor.
  api_key: byNumber(
    (db, ids) => db.selectFrom('api_keys').select(['id', 'name', 'key_hint', 'customer_id']).where('id', 'in', ids).execute(),
    (r) => `API key ${r.name} (${r.key_hint})`,
  ),
  firmware: byNumber(
    (db, ids) => db.selectFrom('firmware').select(['id', 'version', 'platform']).where('id', 'in', ids).execute(),
    (r) => `firmware ${r.version} (${r.platform})`,
  ),
  alert_rule: byNumber((db, ids) => db.selectFrom('alert_rules').select(['id', 'name']).where('id', 'in', ids).execute(), (r) => `alert rule ${r.name}`),
  alert: byNumber(
    (db, ids) =>
      db
        .selectFrom('alerts as l')
        .innerJoin('agents as a', 'a.id', 'l.agent_id')
        .select(['l.id', 'l.rule_name', 'a.customer_id'])
        .where('l.id', 'in', ids)
        .execute(),
    (r) => `alert #${r.id} (${r.rule_name})`,
  ),
  notification_channel: byNumber(
    (db, ids) => db.selectFrom('notification_channels').select(['id', 'name', 'customer_id']).where('id', 'in', ids).execute(),
    (r) => `notification channel ${r.name}`,
  ),
  maintenance_window: byNumber(
    (db, ids) => db.selectFrom('maintenance_windows').select(['id', 'name']).where('id', 'in', ids).execute(),
    (r) => `maintenance window ${r.name}`,
  ),
  script: byNumber((db, ids) => db.selectFrom('scripts').select(['id', 'name']).where('id', 'in', ids).execute(), (r) => `script ${r.name}`),
  bulk_action: byNumber(
    (db, ids) => db.selectFrom('bulk_actions').select(['id', 'action', 'scope_customer_id as customer_id']).where('id', 'in', ids).execute(),
    (r) => `bulk action #${r.id} (${r.action})`,
  ),
};

const keyOf = (ref: TargetRef) => `${ref.kind}\u0000${ref.id}`;

/** Each reference's name, keyed by kind and id (see namedOf). */
export async function nameTargets(db: Kysely<Database>, refs: readonly TargetRef[]): Promise<Map<string, NamedTarget>> {
  const names = new Map<string, NamedTarget>();
  const byKind = new Map<TargetKind, Set<string>>();
  for (const ref of refs) byKind.set(ref.kind, (byKind.get(ref.kind) ?? new Set()).add(ref.id));
  for (const [kind, ids] of byKind) {
    const found = (await NAMERS[kind]?.(db, [...ids])) ?? new Map<string, NamedTarget>();
    for (const id of ids) {
      const named = found.get(id);
      names.set(keyOf({ kind, id }), { label: bounded(named?.label ?? `${KIND_LABEL[kind]} ${id}`), customerId: named?.customerId ?? null });
    }
  }
  return names;
}

export const namedOf = (names: Map<string, NamedTarget>, ref: TargetRef): NamedTarget =>
  names.get(keyOf(ref)) ?? { label: bounded(`${KIND_LABEL[ref.kind]} ${ref.id}`), customerId: null };
