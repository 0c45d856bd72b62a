// Pre-registering an agent before it is installed: the record waits under its name (hostname
// "(ausstehend)") and the agent that registers with that name adopts it, customer included. After it,
// the install commands for the new record.
import { useState } from 'react';
import type { ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import type { Agent, Customer } from '../api/types';
import { Link } from '../router';
import { ErrorBanner } from '../ui/widgets';
import { useSubmit } from '../ui/use-submit';
import { CustomerOptions } from '../ui/customer-options';
import { InstallPanel } from '../install/install-panel';

export function PreRegisterForm({ customers, onCreated }: { customers: Customer[]; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [customerId, setCustomerId] = useState('');
  const [created, setCreated] = useState<Agent>();

  const { busy, error, submit } = useSubmit(async () => {
    // The last success is no longer news: it must not stand beside this attempt's error.
    setCreated(undefined);
    const agent = await api<Agent>('/agents', { method: 'POST', body: { name: name.trim(), customer_id: customerId ? Number(customerId) : null } satisfies ApiRequest<'/agents', 'post'> });
    setCreated(agent);
    setName('');
    onCreated();
  });

  return (
    <>
      <form className="card" onSubmit={(e) => void submit(e)} aria-label="Pre-register an agent">
        <h2>Pre-register an agent</h2>
        <p className="muted">The agent that registers with this name takes over the record, with its customer.</p>
        <div className="row">
          <label>
            Name
            <input name="agent-name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} />
          </label>
          <label>
            Customer
            <select name="agent-customer" value={customerId} onChange={(e) => setCustomerId(e.target.value)}>
              <CustomerOptions customers={customers} emptyLabel="None" />
            </select>
          </label>
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Pre-registering…' : 'Pre-register'}
          </button>
        </div>
        <ErrorBanner error={error} />
        {created && (
          <div className="banner banner-info" role="status">
            Pre-registered <Link to={`/agents/${created.id}`}>{created.name}</Link> with id <span className="mono">{created.id}</span>.
          </div>
        )}
      </form>
      {created && <InstallPanel key={created.id} agentId={created.id} title={`Install ${created.name}`} />}
    </>
  );
}
