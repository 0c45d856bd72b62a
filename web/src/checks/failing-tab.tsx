// The fleet's checks that are not OK, grouped by customer (the server sorts them worst and oldest
// first), refreshed every 30 s. The customer filter lives in the URL (?customer=) so a shared link keeps it.
import { api } from '../api/client';
import type { Customer } from '../api/types';
import { Link, setQuery, useQuery } from '../router';
import { CustomerOptions } from '../ui/customer-options';
import { TableFrame } from '../ui/table-frame';
import { Empty, ErrorBanner, Loading, RelativeTime } from '../ui/widgets';
import { useResource } from '../use-resource';
import { CheckStateBadge } from './check-state-badge';
import type { FailingCheck } from './check-types';

const REFRESH_MS = 30_000;
const NO_CUSTOMER = 'No customer';

/** Rows by customer name, in the server's order within each (the first failing row decides the group's place). */
function byCustomer(rows: readonly FailingCheck[]): Array<[string, FailingCheck[]]> {
  const groups = new Map<string, FailingCheck[]>();
  for (const row of rows) {
    const name = row.customer_name ?? NO_CUSTOMER;
    groups.set(name, [...(groups.get(name) ?? []), row]);
  }
  return [...groups];
}

export function FailingTab() {
  const customerId = useQuery().get('customer') ?? '';
  const customers = useResource((signal) => api<Customer[]>('/customers', { signal }), []);
  const failing = useResource(
    (signal) => api<FailingCheck[]>('/checks/failing', { signal, query: customerId ? { customer_id: customerId } : {} }),
    [customerId],
    { refreshMs: REFRESH_MS },
  );
  return (
    <section aria-label="Failing checks">
      <div className="row">
        <div className="field">
          <label htmlFor="failing-customer">Customer</label>
          <select id="failing-customer" value={customerId} onChange={(e) => setQuery({ customer: e.target.value || undefined })}>
            <CustomerOptions customers={customers.data ?? []} emptyLabel="All customers" />
          </select>
        </div>
        <span className="muted hint">Checks whose latest result is WARNING, CRITICAL or UNKNOWN; refreshed every 30 s.</span>
      </div>
      <ErrorBanner error={failing.error ?? customers.error} />
      {!failing.data ? (
        !failing.error && <Loading />
      ) : failing.data.length === 0 ? (
        <Empty>Every check is OK.</Empty>
      ) : (
        byCustomer(failing.data).map(([customer, rows]) => (
          <section key={customer} className="failing-group" aria-label={customer} data-testid="failing-group">
            <h2>{customer}</h2>
            <TableFrame label={`Failing checks of ${customer}`}>
              <table className="stack-table checks-table">
                <thead>
                  <tr>
                    <th>State</th>
                    <th>Agent</th>
                    <th>Check</th>
                    <th>Output</th>
                    <th>Since</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((r) => (
                    <tr key={`${r.agent_id}/${r.check_id}`} data-testid="failing-row">
                      <td>
                        <CheckStateBadge state={r.state} />
                      </td>
                      <td data-label="Agent">
                        <Link to={`/agents/${encodeURIComponent(r.agent_id)}/checks?check=${encodeURIComponent(r.check_id)}`}>{r.agent_name}</Link>
                      </td>
                      <td data-label="Check">
                        {r.check_name}
                        <div className="muted">{r.policy_name}</div>
                      </td>
                      <td data-label="Output" className="check-output">
                        {r.output}
                      </td>
                      <td data-label="Since" className="nowrap">
                        <RelativeTime iso={r.last_change_at} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableFrame>
          </section>
        ))
      )}
    </section>
  );
}
