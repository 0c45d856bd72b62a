// The overview's tables: a titled panel with a table of agent-supplied rows. Long lists (DHCP leases,
// software, a firewall's 40 routes) show the first rows and a button for the rest, and a filter box
// when they are long enough to need one. Every cell is rendered as text.
import { useState, type ReactNode } from 'react';
import { str, type Obj } from '../../ui/safe-data';
import { Empty } from '../../ui/widgets';
import { TableFrame } from '../../ui/table-frame';

export interface Column {
  label: string;
  cell: (row: Obj) => ReactNode;
  numeric?: boolean;
  /** Left out on a phone, so the columns that matter (a row's actions) fit without sideways scrolling. */
  wideOnly?: boolean;
}

const cellClass = (c: Column) => [c.numeric ? 'num' : '', c.wideOnly ? 'wide-only' : ''].filter(Boolean).join(' ') || undefined;

/** A missing value in a cell. */
export const dash = (text: string) => text || '–';

const FIRST_ROWS = 15;
const FILTER_FROM = 20;

/** Text a row is found by in the filter: its string and number fields. */
function searchText(row: Obj): string {
  return Object.values(row)
    .map((v) => str(v))
    .join(' ')
    .toLowerCase();
}

export function DataPanel({ title, rows, columns, empty, note, wide }: { title: string; rows: Obj[]; columns: Column[]; empty: string; note?: ReactNode; wide?: boolean }) {
  const [all, setAll] = useState(false);
  const [filter, setFilter] = useState('');
  const needle = filter.trim().toLowerCase();
  const matching = needle ? rows.filter((r) => searchText(r).includes(needle)) : rows;
  const shown = all || needle ? matching : matching.slice(0, FIRST_ROWS);
  return (
    <section className={`card panel${wide ? ' panel-wide' : ''}`} aria-label={title}>
      <div className="panel-head">
        <h2>
          {title} {rows.length > 0 && <span className="muted">({rows.length})</span>}
        </h2>
        {rows.length >= FILTER_FROM && <input type="search" aria-label={`Filter ${title}`} placeholder="Filter" value={filter} onChange={(e) => setFilter(e.target.value)} />}
      </div>
      {note}
      {rows.length === 0 ? (
        <Empty>{empty}</Empty>
      ) : (
        <TableFrame label={title}>
          <table>
            <thead>
              <tr>
                {columns.map((c) => (
                  <th key={c.label} className={cellClass(c)}>
                    {c.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {shown.map((row, i) => (
                <tr key={i}>
                  {columns.map((c) => (
                    <td key={c.label} className={cellClass(c)}>
                      {c.cell(row)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
      {!all && !needle && matching.length > FIRST_ROWS && (
        <button type="button" className="link show-all" onClick={() => setAll(true)}>
          Show all {matching.length}
        </button>
      )}
    </section>
  );
}

/** A panel of label/value facts; values missing from the agent's data are left out. */
export function FactsPanel({ title, facts }: { title: string; facts: Array<[string, ReactNode]> }) {
  const present = facts.filter(([, value]) => value !== '' && value !== undefined && value !== null);
  return (
    <section className="card panel" aria-label={title}>
      <h2>{title}</h2>
      {present.length === 0 ? (
        <Empty>Not reported.</Empty>
      ) : (
        <dl className="facts">
          {present.map(([label, value]) => (
            <div key={label} className="fact">
              <dt>{label}</dt>
              <dd>{value}</dd>
            </div>
          ))}
        </dl>
      )}
    </section>
  );
}
