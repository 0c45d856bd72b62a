// Picking agents for a bulk action (issue 33, Build 2): checkboxes on the list, or every agent the
// current filter matches (not only the loaded page: the server resolves the filter when the action is
// made). A change of filter clears the selection, so an action never reaches agents no longer shown.
import { useEffect, useState } from 'react';
import { PLATFORM_LABELS, STATUSES, type AgentStatus, type Platform } from '../api/types';
import { BulkActionForm } from '../bulk/bulk-action-form';
import type { BulkTarget } from '../bulk/bulk-types';

export interface AgentSelection {
  selected: ReadonlySet<string>;
  allMatching: boolean;
  toggle(id: string): void;
  setMany(ids: readonly string[], on: boolean): void;
  selectAllMatching(): void;
  clear(): void;
}

export function useAgentSelection(filterKey: string): AgentSelection {
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [allMatching, setAllMatching] = useState(false);
  useEffect(() => {
    setSelected(new Set());
    setAllMatching(false);
  }, [filterKey]);
  return {
    selected,
    allMatching,
    toggle: (id) => {
      setAllMatching(false);
      setSelected((prev) => {
        const next = new Set(prev);
        if (next.has(id)) next.delete(id);
        else next.add(id);
        return next;
      });
    },
    setMany: (ids, on) => {
      setAllMatching(false);
      setSelected((prev) => {
        const next = new Set(prev);
        for (const id of ids) {
          if (on) next.add(id);
          else next.delete(id);
        }
        return next;
      });
    },
    selectAllMatching: () => setAllMatching(true),
    clear: () => {
      setSelected(new Set());
      setAllMatching(false);
    },
  };
}

const isPlatform = (value: string): value is Platform => value in PLATFORM_LABELS;
const isStatus = (value: string): value is AgentStatus => (STATUSES as readonly string[]).includes(value);

/** The API target of the list's filter: its non-empty values, or every agent in scope. */
export function filterTarget(filters: Record<string, string>): BulkTarget {
  const target: BulkTarget = {};
  if (filters.customer_id) target.customer_id = Number(filters.customer_id);
  if (filters.platform && isPlatform(filters.platform)) target.platform = filters.platform;
  if (filters.status && isStatus(filters.status)) target.status = filters.status;
  if (filters.q) target.q = filters.q;
  if (filters.tag) target.tag = filters.tag;
  return Object.keys(target).length > 0 ? target : { all: true };
}

/** The bar above the list while agents are picked: how many, "all matching", and the action form. */
export function SelectionBar({ selection, filters, shown, hasMore }: { selection: AgentSelection; filters: Record<string, string>; shown: number; hasMore: boolean }) {
  const [open, setOpen] = useState(false);
  const count = selection.selected.size;
  if (count === 0 && !selection.allMatching) return null;
  const label = selection.allMatching ? 'every agent matching the filter' : `${count} selected agent${count === 1 ? '' : 's'}`;
  const target = selection.allMatching ? filterTarget(filters) : { agent_ids: [...selection.selected] };
  return (
    <div className="card selection-bar" data-testid="selection-bar">
      <div className="row">
        <strong data-testid="selection-count">{selection.allMatching ? `All matching${hasMore ? '' : ` (${shown})`}` : `${count} selected`}</strong>
        {!selection.allMatching && (
          <button type="button" className="link" onClick={selection.selectAllMatching}>
            Select all matching the filter{hasMore ? ' (more than shown)' : ''}
          </button>
        )}
        <button type="button" className="link" onClick={selection.clear}>
          Clear
        </button>
        <button type="button" className="primary" onClick={() => setOpen((o) => !o)} aria-expanded={open}>
          {open ? 'Hide action' : 'Run an action…'}
        </button>
      </div>
      {open && <BulkActionForm target={target} targetLabel={label} />}
    </div>
  );
}
