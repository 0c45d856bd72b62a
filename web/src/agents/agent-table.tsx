// The agents table: a sortable header (the server sorts; the column and direction go in the URL) and
// the technician's columns (agent-columns.tsx) that the column chooser shows (column-choice.ts: below
// 1500 px platform, IP and uptime step aside unless chosen; on a phone only name, status and the
// fullest disk); the table scrolls inside its frame rather than the page.
import type { Agent, Customer } from '../api/types';
import { setQuery } from '../router';
import { Empty } from '../ui/widgets';
import { AGENT_COLUMNS, type AgentColumn, type SortKey } from './agent-columns';
import type { AgentSelection } from './agent-selection';
import { TableFrame } from '../ui/table-frame';

/** The column a URL's `sort` names; name for anything else. */
export function sortColumn(value: string | null): SortKey {
  return AGENT_COLUMNS.find((c) => c.sort !== undefined && c.sort === value)?.sort ?? 'name';
}

export function AgentTable({
  agents,
  columns,
  customers,
  sort,
  descending,
  selection,
}: {
  agents: Agent[];
  /** The columns shown, in order. */
  columns: readonly AgentColumn[];
  customers: ReadonlyMap<number, Customer>;
  sort: SortKey;
  descending: boolean;
  /** Checkboxes for bulk actions (not part of the columns, so never in the CSV). */
  selection?: AgentSelection;
}) {
  if (agents.length === 0) return <Empty>No agents match.</Empty>;
  const toggle = (column: SortKey) => setQuery({ sort: column, dir: sort === column && !descending ? 'desc' : undefined });
  const classOf = (c: AgentColumn) => (c.numeric ? 'num' : undefined);
  return (
    <TableFrame label="Agents">
      <table data-testid="agents-table" className="agents-table">
        <thead>
          <tr>
            {selection && (
              <th className="select">
                <input
                  type="checkbox"
                  aria-label="Select all shown"
                  checked={selection.allMatching || (agents.length > 0 && agents.every((a) => selection.selected.has(a.id)))}
                  onChange={(e) => selection.setMany(agents.map((a) => a.id), e.target.checked)}
                />
              </th>
            )}
            {columns.map((c) => (
              <th key={c.id} className={classOf(c)} data-column={c.id} aria-sort={c.sort && sort === c.sort ? (descending ? 'descending' : 'ascending') : undefined}>
                {c.sort ? (
                  <button type="button" className="sort" onClick={() => toggle(c.sort!)}>
                    {c.label}
                    {sort === c.sort ? (descending ? ' ▼' : ' ▲') : ''}
                  </button>
                ) : (
                  c.label
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {agents.map((a) => (
            <tr key={a.id} data-testid="agent-row">
              {selection && (
                <td className="select">
                  <input type="checkbox" aria-label={`Select ${a.name}`} checked={selection.allMatching || selection.selected.has(a.id)} onChange={() => selection.toggle(a.id)} />
                </td>
              )}
              {columns.map((c) => (
                <td key={c.id} className={classOf(c)} data-column={c.id}>
                  {c.cell ? c.cell(a, customers) : c.text(a, customers)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </TableFrame>
  );
}
