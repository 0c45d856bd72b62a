// All customers: a list filtered as you type (client side: a company has dozens of customers, not
// thousands) and a form that creates one. The filter lives in the URL so a reload keeps it.
import { useMemo, useState } from 'react';
import { Allowed } from '../auth/access';
import type { ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import type { Customer } from '../api/types';
import { Link, setQuery, useQuery } from '../router';
import { Empty, ErrorBanner, Loading, RelativeTime } from '../ui/widgets';
import { useResource } from '../use-resource';
import './customers.css';
import { useSubmit } from '../ui/use-submit';
import { TableFrame } from '../ui/table-frame';

/** Customer numbers are text but usually digits: "2" before "10". */
export const byNumber = (a: Customer, b: Customer) => a.number.localeCompare(b.number, undefined, { numeric: true }) || a.name.localeCompare(b.name);

export function CustomersPage() {
  const filter = useQuery().get('q') ?? '';
  const customers = useResource((signal) => api<Customer[]>('/customers', { signal }), []);
  const shown = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    const all = [...(customers.data ?? [])].sort(byNumber);
    return needle ? all.filter((c) => c.number.toLowerCase().includes(needle) || c.name.toLowerCase().includes(needle)) : all;
  }, [customers.data, filter]);

  return (
    <section>
      <h1>Customers {customers.data && <span className="muted">({customers.data.length})</span>}</h1>
      <div className="row" role="search">
        <label>
          Search
          <input type="search" placeholder="Number or name" value={filter} onChange={(e) => setQuery({ q: e.target.value || undefined })} maxLength={200} />
        </label>
      </div>
      <ErrorBanner error={customers.error} />
      {!customers.data ? (
        !customers.error && <Loading />
      ) : shown.length === 0 ? (
        <Empty>{filter.trim() ? 'No customer matches.' : 'No customers yet.'}</Empty>
      ) : (
        <TableFrame label="Customers">
          <table data-testid="customers-table">
            <thead>
              <tr>
                <th>Number</th>
                <th>Name</th>
                <th>Created</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((c) => (
                <tr key={c.id} data-testid="customer-row">
                  <td className="mono">
                    <Link to={`/customers/${c.id}`}>{c.number}</Link>
                  </td>
                  <td>
                    <Link to={`/customers/${c.id}`}>{c.name}</Link>
                  </td>
                  <td>
                    <RelativeTime iso={c.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
      {/* A new customer is server-wide: refused to users limited to customers. */}
      <Allowed need="server-wide">
        <CreateCustomerForm onCreated={customers.reload} />
      </Allowed>
    </section>
  );
}

function CreateCustomerForm({ onCreated }: { onCreated: () => void }) {
  const [number, setNumber] = useState('');
  const [name, setName] = useState('');
  const [created, setCreated] = useState<Customer>();
  const { busy, error, submit } = useSubmit(async () => {
    setCreated(undefined);
    setCreated(await api<Customer>('/customers', { method: 'POST', body: { number: number.trim(), name: name.trim() } satisfies ApiRequest<'/customers', 'post'> }));
    // Cleared only on success: after an error (a number already taken) the user corrects, not retypes.
    setNumber('');
    setName('');
    onCreated();
  });
  return (
    <form className="card customer-create" onSubmit={(e) => void submit(e)} aria-label="Create a customer">
      <h2>Create a customer</h2>
      <div className="row">
        <label>
          Customer number
          <input value={number} onChange={(e) => setNumber(e.target.value)} required maxLength={64} placeholder="10042" />
        </label>
        <label>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} placeholder="Bäckerei Schmidt" />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create customer'}
        </button>
      </div>
      <ErrorBanner error={error} />
      {created && (
        <div className="banner banner-info" role="status">
          Customer <Link to={`/customers/${created.id}`}>{`${created.number} ${created.name}`}</Link> created. Create an API key for its agents on its page.
        </div>
      )}
    </form>
  );
}
