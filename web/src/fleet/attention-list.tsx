// The fleet page's "Needs attention": a count per severity, then the agents ranked by their most severe
// reason (offline, stale, certificates, disks), each reason in its group's colour; agents whose only
// reason is updates available collapse into one line that opens to the list.
import { hostnameText } from '../api/types';
import { Link } from '../router';
import { Empty, RelativeTime, StatusBadge } from '../ui/widgets';
import type { AttentionItem } from './fleet-data';
import { rankAttention, SEVERITIES, severityOf } from './severity';
import './fleet.css';
import { TableFrame } from '../ui/table-frame';

export function AttentionList({ items }: { items: AttentionItem[] }) {
  if (items.length === 0) return <Empty>Nothing needs attention.</Empty>;
  const { ranked, updatesOnly, updatePackages, counts } = rankAttention(items);
  return (
    <>
      <ul className="severity-counts" aria-label="Needing attention by severity">
        {SEVERITIES.map((s) => (
          <li key={s.id} className={`sev sev-${s.id}`} data-testid={`severity-${s.id}`}>
            <strong>{counts[s.id]}</strong> {s.label.toLowerCase()}
          </li>
        ))}
      </ul>
      {ranked.length > 0 && <AttentionTable items={ranked} testId="attention" />}
      {updatesOnly.length > 0 && (
        <details className="updates-line sev-updates" data-testid="attention-updates">
          <summary>
            <span className="sev-dot" aria-hidden="true" />
            Updates available on <strong>{updatesOnly.length}</strong> {updatesOnly.length === 1 ? 'agent' : 'agents'}
            {updatePackages > 0 && ` (${updatePackages} ${updatePackages === 1 ? 'package' : 'packages'})`}
            <span className="muted"> · show</span>
          </summary>
          <AttentionTable items={updatesOnly} testId="attention-updates-table" />
        </details>
      )}
    </>
  );
}

function AttentionTable({ items, testId }: { items: AttentionItem[]; testId: string }) {
  return (
    <TableFrame label="Needs attention">
      <table data-testid={testId} className="attention-table">
        <thead>
          <tr>
            <th>Agent</th>
            <th>Status</th>
            <th>Why</th>
            <th>Last heartbeat</th>
          </tr>
        </thead>
        <tbody>
          {items.map(({ agent, reasons }) => (
            <tr key={agent.id} className={`sev-row sev-${severityOf(reasons[0]!.kind)}`} data-severity={severityOf(reasons[0]!.kind)}>
              <td>
                <Link to={`/agents/${agent.id}`} className="name">
                  {agent.name}
                </Link>
                <div className="muted name">{hostnameText(agent.hostname)}</div>
              </td>
              <td>
                <StatusBadge status={agent.status} />
              </td>
              <td>
                <div className="reasons">
                  {reasons.map((r, i) => (
                    <span key={i} className={`badge sev sev-${severityOf(r.kind)}`}>
                      {r.message}
                    </span>
                  ))}
                </div>
              </td>
              <td>
                <RelativeTime iso={agent.last_heartbeat} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableFrame>
  );
}
