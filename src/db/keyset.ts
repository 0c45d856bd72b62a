// Keyset paging in SQL: a list's order is a tuple of key expressions ending in a unique one, all
// ascending or all descending, so "after this position" is one row comparison, `(k1, k2, id) > (…)`,
// and each page is the next `limit` rows of that order (plus one, to know whether more follow).
// Each row carries its own key as `page_key` (a JSON array made by the database), so a position is
// exactly what the database compares: timestamps keep their microseconds and text its collation.
// Positions come back from clients inside cursors, so they are checked against the key's types here
// before they reach a statement: a forged one is a 400, never a database error.
import { sql, type AliasedRawBuilder, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { invalidPosition, type Page, type PageKey, type PageRequest } from '../platform/paging.js';

export type KeyType = 'text' | 'int4' | 'int8' | 'timestamptz';

export interface KeyColumn {
  expr: RawBuilder<unknown>;
  type: KeyType;
}

export interface Keyset {
  /** Never null in any row (coalesce where needed): a null makes the row comparison unknown. */
  columns: readonly KeyColumn[];
  descending: boolean;
}

/** A key column: a column reference (`a.name`) or an expression built with `sql`. */
export function keyColumn(expr: string | RawBuilder<unknown>, type: KeyType): KeyColumn {
  return { expr: typeof expr === 'string' ? sql.ref(expr) : expr, type };
}

export function keyset(columns: readonly KeyColumn[], descending = false): Keyset {
  return { columns, descending };
}

/** History (events, audit, backups, activity): newest first by time, rows of one instant by id. */
export function newestFirst(time: string, id: string): Keyset {
  return keyset([keyColumn(time, 'timestamptz'), keyColumn(id, 'int8')], true);
}

/** Text of a timestamp in a cursor: UTC with microseconds, which PostgreSQL reads back exactly. */
const TIMESTAMP_KEY = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{6}Z$/;
const MAX_TEXT_KEY = 2000;
const INT4_MAX = 2_147_483_647;

function validKeyValue(value: unknown, type: KeyType): boolean {
  switch (type) {
    case 'text':
      // PostgreSQL text cannot hold NUL.
      return typeof value === 'string' && value.length <= MAX_TEXT_KEY && !value.includes('\u0000');
    case 'int4':
      return Number.isInteger(value) && Math.abs(value as number) <= INT4_MAX;
    case 'int8':
      return Number.isSafeInteger(value);
    case 'timestamptz': {
      if (typeof value !== 'string') return false;
      const m = TIMESTAMP_KEY.exec(value);
      if (!m || m[1] === '0000') return false;
      // A real calendar date and time (no February 30th), which is what the database would accept.
      const parsed = new Date(`${value.slice(0, 19)}Z`);
      return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 19) === value.slice(0, 19);
    }
  }
}

/** The position, checked against the keyset; a 400 naming `cursor` when it cannot be one of its positions. */
export function checkedPosition(ks: Keyset, after: PageKey | null): PageKey | null {
  if (after === null) return null;
  const fits = after.length === ks.columns.length && ks.columns.every((c, i) => validKeyValue(after[i], c.type));
  if (!fits) throw invalidPosition();
  return after;
}

const asKeyText = (c: KeyColumn) =>
  c.type === 'timestamptz' ? sql`to_char(${c.expr} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')` : c.expr;

/** The select item `page_key`: the row's key values as a JSON array. */
export function pageKeySelection(ks: Keyset): AliasedRawBuilder<PageKey, 'page_key'> {
  return sql<PageKey>`json_build_array(${sql.join(ks.columns.map(asKeyText))})`.as('page_key');
}

/** `(k1, k2, …) > (v1, v2, …)` (`<` when descending) for an already checked position. */
export function afterPosition(ks: Keyset, after: PageKey): RawBuilder<SqlBool> {
  const values = ks.columns.map((c, i) => sql`${after[i]}::${sql.raw(c.type)}`);
  return sql<SqlBool>`(${sql.join(ks.columns.map((c) => c.expr))}) ${sql.raw(ks.descending ? '<' : '>')} (${sql.join(values)})`;
}

/** `k1 asc, k2 asc, …` for an ORDER BY. */
export function keyOrder(ks: Keyset): RawBuilder<unknown> {
  const direction = sql.raw(ks.descending ? 'desc' : 'asc');
  return sql.join(ks.columns.map((c) => sql`${c.expr} ${direction}`));
}

/** The keyset's condition (true on the first page) for statements written as SQL text. */
export function afterCondition(ks: Keyset, request: PageRequest): RawBuilder<SqlBool> {
  const after = checkedPosition(ks, request.after);
  return after === null ? sql<SqlBool>`true` : afterPosition(ks, after);
}

/** Adds the page's position, order, size (one more, to see whether more follow) and `page_key`. */
export function keysetPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  ks: Keyset,
  request: PageRequest,
): SelectQueryBuilder<DB, TB, O & { page_key: PageKey }> {
  const selected = query.select(pageKeySelection(ks) as never) as unknown as SelectQueryBuilder<DB, TB, O & { page_key: PageKey }>;
  return selected
    .where(afterCondition(ks, request))
    .orderBy(keyOrder(ks) as never)
    .limit(request.limit + 1);
}

/** The page from up to `limit + 1` rows in key order; `page_key` is taken off the items. */
export function toPage<R extends { page_key: PageKey }>(rows: readonly R[], limit: number): Page<Omit<R, 'page_key'>> {
  const kept = rows.slice(0, limit);
  const last = kept.at(-1);
  const items = kept.map(({ page_key: _key, ...item }) => item);
  return { items, next: rows.length > limit && last ? last.page_key : null };
}
