// One customer: its number and name (editable), its agents with the key each last used, one action on
// all of them (a bulk action), its API keys, its installer key and the rules for automatic Windows
// software updates. Deleting it deletes its keys and unassigns its agents.
import { useState } from 'react';
import type { ApiItem, ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import { hostnameText, PLATFORM_LABELS, type Customer } from '../api/types';
import { Allowed } from '../auth/access';
import { BulkActionForm } from '../bulk/bulk-action-form';
import { ApiKeysPanel } from '../keys/api-keys-panel';
import { Link, navigate } from '../router';
import { useActionError } from '../ui/use-action-error';
import { ConfirmButton, Empty, ErrorBanner, Loading, LoadMore, RelativeTime, StatusBadge } from '../ui/widgets';
import { usePagedList } from '../use-paged-list';
import { useResource } from '../use-resource';
import { InstallPanel } from '../install/install-panel';
import { InstallerKeyPanel } from './installer-key';
import { WauSection } from './wau-rules';
import './customers.css';
import { useSubmit } from '../ui/use-submit';
import { TableFrame } from '../ui/table-frame';

/** An agent as the customer's list returns it: with the hint of the key of its latest heartbeat. */
type CustomerAgent = ApiItem<'/customers/{id}/agents'>;

const AGENTS_REFRESH_MS = 30_000;
const AGENTS_PAGE = 100;

export function CustomerPage({ id }: { id: string }) {
  // The route gives any text; the API only knows positive integers, so anything else is not found here.
  const customerId = /^[1-9]\d{0,9}$/.test(id) ? Number(id) : undefined;
  const customer = useResource(
    (signal) => (customerId === undefined ? Promise.reject(new Error(`There is no customer "${id}".`)) : api<Customer>(`/customers/${customerId}`, { signal })),
    [customerId, id],
  );
  if (!customer.data) {
    return (
      <section>
        <p className="crumbs">
          <Link to="/customers">Customers</Link>
        </p>
        {customer.error ? <ErrorBanner error={customer.error} /> : <Loading />}
      </section>
    );
  }
  const c = customer.data;
  return <CustomerSections customer={c} onSaved={customer.reload} />;
}

function CustomerSections({ customer: c, onSaved }: { customer: Customer; onSaved: () => void }) {
  // The installer key is one of the customer's API keys: the list shows it once it is made or replaced.
  const [keysVersion, setKeysVersion] = useState(0);
  return (
    <section>
      <p className="crumbs">
        <Link to="/customers">Customers</Link> / {c.name}
      </p>
      <CustomerHeader customer={c} onSaved={onSaved} />
      <h2>Agents</h2>
      <CustomerAgents customerId={c.id} />
      <Allowed need="write">
        <h2>Run on all agents of this customer</h2>
        <BulkActionForm target={{ customer_id: c.id }} targetLabel={`all agents of ${c.name}`} />
        <InstallPanel customerId={c.id} title="Install agents for this customer" onMade={() => setKeysVersion((v) => v + 1)} />
      </Allowed>
      <h2>API keys</h2>
      <ApiKeysPanel key={keysVersion} customers={[c]} customerId={c.id} />
      <h2>Installer</h2>
      <InstallerKeyPanel customerId={c.id} onKeysChanged={() => setKeysVersion((v) => v + 1)} />
      <WauSection customerId={c.id} />
    </section>
  );
}

function CustomerHeader({ customer, onSaved }: { customer: Customer; onSaved: () => void }) {
  const [editing, setEditing] = useState(false);
  const { error, guard } = useActionError();
  const remove = () => guard(async () => {
    await api(`/customers/${customer.id}`, { method: 'DELETE' });
    navigate('/customers');
  });
  if (editing) {
    return (
      <EditCustomerForm
        customer={customer}
        onDone={(saved) => {
          setEditing(false);
          if (saved) onSaved();
        }}
      />
    );
  }
  return (
    <>
      <div className="customer-head">
        <h1>
          <span className="mono">{customer.number}</span> {customer.name}
        </h1>
        <Allowed need="write">
          <button type="button" onClick={() => setEditing(true)}>
            Edit
          </button>
          <ConfirmButton
            label="Delete customer"
            question={`Delete customer "${customer.name}"? Its API keys are deleted and its agents become unassigned.`}
            busyLabel="Deleting…"
            onConfirm={remove}
          />
        </Allowed>
      </div>
      <p className="muted">
        Created <RelativeTime iso={customer.created_at} />
      </p>
      <ErrorBanner error={error} />
    </>
  );
}

function EditCustomerForm({ customer, onDone }: { customer: Customer; onDone: (saved: boolean) => void }) {
  const [number, setNumber] = useState(customer.number);
  const [name, setName] = useState(customer.name);
  // On an error the form stays open with what was typed, so a taken number can be corrected.
  const { busy, error, submit } = useSubmit(async () => {
    await api<Customer>(`/customers/${customer.id}`, { method: 'PUT', body: { number: number.trim(), name: name.trim() } satisfies ApiRequest<'/customers/{id}', 'put'> });
    onDone(true);
  });
  return (
    <form className="card customer-edit" onSubmit={(e) => void submit(e)} aria-label="Edit the customer">
      <div className="row">
        <label>
          Customer number
          <input value={number} onChange={(e) => setNumber(e.target.value)} required maxLength={64} />
        </label>
        <label>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : 'Save'}
        </button>
        <button type="button" onClick={() => onDone(false)} disabled={busy}>
          Cancel
        </button>
      </div>
      <ErrorBanner error={error} />
    </form>
  );
}

function CustomerAgents({ customerId }: { customerId: number }) {
  // By name, as the server orders them, a page at a time.
  const agents = usePagedList<CustomerAgent>(`/customers/${customerId}/agents`, {}, { pageSize: AGENTS_PAGE, refreshMs: AGENTS_REFRESH_MS });
  if (!agents.items) return agents.error ? <ErrorBanner error={agents.error} /> : <Loading />;
  const list = agents.items;
  return (
    <>
      <ErrorBanner error={agents.error} />
      {list.length === 0 ? (
        <Empty>No agents yet. Agents that register with one of this customer's API keys, or are assigned to it, appear here.</Empty>
      ) : (
        <TableFrame label="Agents of this customer">
          <table data-testid="customer-agents-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Hostname</th>
                <th>Platform</th>
                <th>Status</th>
                <th>Last heartbeat</th>
                <th>Last API key</th>
              </tr>
            </thead>
            <tbody>
              {list.map((a) => (
                <tr key={a.id} data-testid="customer-agent-row">
                  <td>
                    <Link to={`/agents/${encodeURIComponent(a.id)}`}>{a.name}</Link>
                  </td>
                  <td>{hostnameText(a.hostname)}</td>
                  <td>{a.platform ? PLATFORM_LABELS[a.platform] : <span className="muted">–</span>}</td>
                  <td>
                    <StatusBadge status={a.status} />
                  </td>
                  <td>
                    <RelativeTime iso={a.last_heartbeat} />
                  </td>
                  <td className="mono">{a.last_api_key || <span className="muted">none yet</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
      <LoadMore list={agents} />
    </>
  );
}
