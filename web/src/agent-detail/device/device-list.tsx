// What the Processes and Services tabs share: the row above the list (a filter, a refresh and what the
// tab adds) and the list's states (loading, failed, nothing to show, or the table).
import type { ReactNode } from 'react';
import { Empty, Loading } from '../../ui/widgets';

export function FilterRow({
  filter,
  setFilter,
  placeholder,
  refresh,
  refreshing,
  children,
}: {
  filter: string;
  setFilter: (filter: string) => void;
  placeholder: string;
  refresh: () => void;
  refreshing: boolean;
  children?: ReactNode;
}) {
  return (
    <div className="row">
      <label>
        Filter
        <input type="search" value={filter} onChange={(e) => setFilter(e.target.value)} placeholder={placeholder} />
      </label>
      {children}
      <button type="button" onClick={refresh} disabled={refreshing}>
        {refreshing ? 'Refreshing…' : 'Refresh'}
      </button>
    </div>
  );
}

/** The table once loaded and not empty; else "Loading…" (unless it failed: the banner says so) or `empty`. */
export function ListBody({ loaded, failed, count, empty, children }: { loaded: boolean; failed: boolean; count: number; empty: string; children: ReactNode }) {
  if (!loaded) return failed ? null : <Loading />;
  return count === 0 ? <Empty>{empty}</Empty> : <>{children}</>;
}
