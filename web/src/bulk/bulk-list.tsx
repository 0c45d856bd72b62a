// The bulk actions, newest first, a page at a time, with their result counts; each opens its page.
// Refreshed every 15 s so running ones move on.
import { useMemo } from 'react';
import { api } from '../api/client';
import type { Customer } from '../api/types';
import type { Script } from '../scripts/script-types';
import { Link } from '../router';
import { Empty, ErrorBanner, Loading, LoadMore, RelativeTime } from '../ui/widgets';
import { usePagedList } from '../use-paged-list';
import { useResource } from '../use-resource';
import { CountsLine, describeAction, TargetText } from './bulk-describe';
import type { BulkAction } from './bulk-types';
import './bulk.css';
import { TableFrame } from '../ui/table-frame';

const REFRESH_MS = 15_000;
const PAGE = 50;

export function BulkActionList() {
  const actions = usePagedList<BulkAction>('/bulk-actions', {}, { pageSize: PAGE, refreshMs: REFRESH_MS });
  // Names for what actions store by id: the customer of a target, the script of a script run.
  const customers = useResource((signal) => api<Customer[]>('/customers', { signal }), []);
  const scripts = useResource((signal) => api<Script[]>('/scripts', { signal }), []);
  const customerNames = useMemo(() => new Map((customers.data ?? []).map((c) => [c.id, c.name])), [customers.data]);
  const scriptNames = useMemo(() => new Map((scripts.data ?? []).map((s) => [s.id, s.name])), [scripts.data]);
  const list = actions.items ?? [];
  return (
    <div>
      <p className="muted">Start one from a customer's page ("Run on all agents of this customer").</p>
      <ErrorBanner error={actions.error} />
      {!actions.items ? (
        !actions.error && <Loading />
      ) : list.length === 0 ? (
        <Empty>No bulk actions yet.</Empty>
      ) : (
        <TableFrame label="Bulk actions">
          <table data-testid="bulk-actions-table">
            <thead>
              <tr>
                <th>Started</th>
                <th>Action</th>
                <th>On</th>
                <th>By</th>
                <th>Results</th>
              </tr>
            </thead>
            <tbody>
              {list.map((a) => (
                <tr key={a.id} data-testid="bulk-action-row">
                  <td>
                    <Link to={`/bulk/${a.id}`}>
                      <RelativeTime iso={a.created_at} />
                    </Link>
                  </td>
                  <td className="bulk-what">
                    <Link to={`/bulk/${a.id}`}>{describeAction(a, scriptNames)}</Link>
                  </td>
                  <td>
                    <TargetText target={a.target} customers={customerNames} />
                  </td>
                  <td>{a.actor}</td>
                  <td>
                    <CountsLine counts={a.counts} />
                    {!a.finished && <div className="muted">in progress</div>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
      <LoadMore list={actions} />
    </div>
  );
}
