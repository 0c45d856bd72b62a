// The agents table: sortable by any column (client side: the list is already filtered by the server),
// status badges, last heartbeat as relative time.
import { PLATFORM_LABELS, type Agent, type Customer } from '../api/types';
import { Link, setQuery } from '../router';
import { Empty, RelativeTime, StatusBadge } from '../ui/widgets';

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
const STATUS_ORDER = { offline: 0, stale: 1, unknown: 2, online: 3 } as const;

function sortKey(agent: Agent, column: Column, customers: Map<number, Customer>): string | number {
  switch (column) {
    case 'customer':
      return agent.customer_id === null ? '' : (customers.get(agent.customer_id)?.name ?? '').toLowerCase();
    case 'platform':
      return agent.platform ?? '';
    case 'status':
      return STATUS_ORDER[agent.status];
    case 'last_heartbeat':
      return agent.last_heartbeat ? Date.parse(agent.last_heartbeat) : 0;
    case 'version':
      return agent.agent_version ?? '';
    default:
      return agent[column].toLowerCase();
  }
}

export function sortAgents(agents: Agent[], column: string, descending: boolean, customers: Map<number, Customer>): Agent[] {
  const col = (COLUMNS.some((c) => c.id === column) ? column : 'name') as Column;
  const sorted = [...agents].sort((a, b) => {
    const ka = sortKey(a, col, customers);
    const kb = sortKey(b, col, customers);
    return ka < kb ? -1 : ka > kb ? 1 : a.name.localeCompare(b.name);
  });
  return descending ? sorted.reverse() : sorted;
}

export function AgentTable({ agents, customers, sort, descending }: { agents: Agent[]; customers: Map<number, Customer>; sort: string; descending: boolean }) {
  if (agents.length === 0) return <Empty>No agents match.</Empty>;
  const rows = sortAgents(agents, sort, descending, customers);
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
          {rows.map((a) => (
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
