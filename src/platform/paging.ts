// Keyset paging, the part every layer shares: a page is asked for by size and by the position after
// which it starts (the sort key values of the last item seen, the id last), and answers its items and
// the position of its last item when more follow. Never an offset: a position stays valid while rows
// are added or removed before it, and reading page 500 costs what reading page 1 does.
import { AppError } from './errors.js';

/** The sort key values of one item, in the list's key order (the id, or another unique value, last). */
export type PageKey = ReadonlyArray<string | number>;

export interface PageRequest {
  limit: number;
  /** Start after this position; null: from the start of the list. */
  after: PageKey | null;
}

export interface Page<T> {
  items: T[];
  /** The position of the last item when more items follow, else null. */
  next: PageKey | null;
}

/** A cursor's position that cannot be one of this list's (wrong count or types of key values). */
export function invalidPosition(): AppError {
  return new AppError('VALIDATION_ERROR', 'The cursor is not a position in this list', { details: [{ path: 'cursor', message: 'not a position in this list' }] });
}

export function mapPage<T, U>(page: Page<T>, map: (item: T) => U): Page<U> {
  return { items: page.items.map(map), next: page.next };
}

/**
 * The page from a list already in memory and in order (small lists ordered by a rule SQL cannot
 * express, like numeric-aware versions): the items after `after` by `compare`, positions by `keyOf`.
 */
export function pageOfSorted<T>(sorted: readonly T[], request: PageRequest, keyOf: (item: T) => PageKey, compareKeys: (a: PageKey, b: PageKey) => number): Page<T> {
  const after = request.after;
  const start = after === null ? 0 : sorted.findIndex((item) => compareKeys(keyOf(item), after) > 0);
  const rest = start < 0 ? [] : sorted.slice(start);
  const items = rest.slice(0, request.limit);
  const last = items.at(-1);
  return { items, next: rest.length > request.limit && last !== undefined ? keyOf(last) : null };
}
