// Client-side sorting of a table the console holds whole (a device's processes, a directory's loaded
// entries): a column header that sorts on click and says how (aria-sort), and the state behind it.
// Tables the server sorts keep their sort in the URL instead (agents/agent-table.tsx).
import { useState, type ReactNode } from 'react';

export interface Sort<K extends string> {
  key: K;
  descending: boolean;
}

export function useSort<K extends string>(initial: Sort<K>): { sort: Sort<K>; toggle: (key: K, descendingFirst?: boolean) => void } {
  const [sort, setSort] = useState(initial);
  // A new column starts in its natural direction (largest first for numbers), the same one flips.
  const toggle = (key: K, descendingFirst = false) => setSort((s) => (s.key === key ? { key, descending: !s.descending } : { key, descending: descendingFirst }));
  return { sort, toggle };
}

/** `compare` turned around when descending. */
export function ordered<T>(items: readonly T[], compare: (a: T, b: T) => number, descending: boolean): T[] {
  return [...items].sort((a, b) => (descending ? -compare(a, b) : compare(a, b)));
}

/** Compares by a number; a missing one counts as the smallest. */
export function byNumber<T>(value: (item: T) => number | null | undefined): (a: T, b: T) => number {
  return (a, b) => (value(a) ?? -Infinity) - (value(b) ?? -Infinity);
}

export function SortHeader<K extends string>({
  label,
  column,
  sort,
  toggle,
  descendingFirst = false,
  className,
}: {
  label: ReactNode;
  column: K;
  sort: Sort<K>;
  toggle: (key: K, descendingFirst?: boolean) => void;
  descendingFirst?: boolean;
  className?: string;
}) {
  const active = sort.key === column;
  return (
    <th className={className} aria-sort={active ? (sort.descending ? 'descending' : 'ascending') : undefined}>
      <button type="button" className="sort" onClick={() => toggle(column, descendingFirst)}>
        {label}
        {active ? (sort.descending ? ' ▼' : ' ▲') : ''}
      </button>
    </th>
  );
}
