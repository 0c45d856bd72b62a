// The agents table: a sortable header (the server sorts; the column and direction go in the URL),
// status badges, last heartbeat as relative time.
import { PLATFORM_LABELS, type Agent, type Customer } from '../api/types';
import { Link, setQuery } from '../router';
import { Empty, RelativeTime, StatusBadge } from '../ui/widgets';

/** The API's `sort` values, one per column. */
type Column = 'name' | 'hostname' | 'customer' | 'platform' | 'status' | 'last_heartbeat' | 'version';

const COLUMNS: Array<{ id: Column; label: string }> = [
  { id: 'name', label: 'Name' },
  { id: 'hostname', label: 'Hostname' },
  { id: 'customer', label: 'Customer' },
  { id: 'platform', label: 'Platform' },
  { id: 'status', label: 'Status' },
  { id: 'last_heartbeat', label: 'Last heartbeat' },
  { id: 'version', label: 'Agent version' },
];

/** The column a URL's `sort` names; name for anything else. */
export function sortColumn(value: string | null): Column {
  return COLUMNS.find((c) => c.id === value)?.id ?? 'name';
}

export function AgentTable({ agents, customers, sort, descending }: { agents: Agent[]; customers: Map<number, Customer>; sort: Column; descending: boolean }) {
  if (agents.length === 0) return <Empty>No agents match.</Empty>;
  const toggle = (column: Column) => setQuery({ sort: column, dir: sort === column && !descending ? 'desc' : undefined });
  return (
    <div className="table-wrap">
      <table data-testid="agents-table">
        <thead>
          <tr>
            {COLUMNS.map((c) => (
              <th key={c.id} aria-sort={sort === c.id ? (descending ? 'descending' : 'ascending') : undefined}>
                <button type="button" className="sort" onClick={() => toggle(c.id)}>
                  {c.label}
                  {sort === c.id ? (descending ? ' ▼' : ' ▲') : ''}
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {agents.map((a) => (
            <tr key={a.id} data-testid="agent-row">
              <td>
                <Link to={`/agents/${a.id}`}>{a.name}</Link>
              </td>
              <td>{a.hostname}</td>
              <td>{a.customer_id === null ? <span className="muted">–</span> : (customers.get(a.customer_id)?.name ?? `#${a.customer_id}`)}</td>
              <td>{a.platform ? PLATFORM_LABELS[a.platform] : <span className="muted">–</span>}</td>
              <td>
                <StatusBadge status={a.status} />
              </td>
              <td>
                <RelativeTime iso={a.last_heartbeat} />
              </td>
              <td className="mono">
                {a.agent_version ?? '–'}
                {a.update_requested ? (
                  <>
                    {' '}
                    <span className="badge badge-warn" title="Update requested: the agent updates itself at its updater's next check">
                      update
                    </span>
                  </>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
