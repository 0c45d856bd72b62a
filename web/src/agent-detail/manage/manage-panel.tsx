// Moving an agent to another customer (or to none) and deleting it, on the Actions tab. Neither needs
// the agent to be connected. Deleting asks first, takes the agent's metrics, events, backups and tunnels
// with it, and returns to the agents list.
import { useEffect, useState } from 'react';
import type { ApiRequest } from '../../api/api-types';
import { api } from '../../api/client';
import type { Agent, Customer } from '../../api/types';
import { navigate } from '../../router';
import { CustomerOptions } from '../../ui/customer-options';
import { useActionError } from '../../ui/use-action-error';
import { useSubmit } from '../../ui/use-submit';
import { ConfirmButton, ErrorBanner } from '../../ui/widgets';
import { useResource } from '../../use-resource';

export function ManagePanel({ agent, onChanged }: { agent: Agent; onChanged: () => void }) {
  const customers = useResource((signal) => api<Customer[]>('/customers', { signal }), []);
  const current = agent.customer_id === null ? '' : String(agent.customer_id);
  const [target, setTarget] = useState(current);
  useEffect(() => setTarget(current), [current]);
  const path = `/agents/${encodeURIComponent(agent.id)}/customer`;
  const move = useSubmit(async () => {
    await (target ? api<Agent>(path, { method: 'PUT', body: { customer_id: Number(target) } satisfies ApiRequest<'/agents/{id}/customer', 'put'> }) : api<Agent>(path, { method: 'DELETE' }));
    onChanged();
  });
  const { error: deleteError, guard } = useActionError();

  return (
    <div className="card panel" aria-label="Manage agent">
      <h2>Customer and removal</h2>
      <form className="row" onSubmit={(e) => void move.submit(e)}>
        <label>
          Customer
          <select name="move-customer" value={target} onChange={(e) => setTarget(e.target.value)}>
            <CustomerOptions customers={customers.data ?? []} emptyLabel="None" />
          </select>
        </label>
        <button type="submit" disabled={move.busy || target === current}>
          {move.busy ? 'Moving…' : 'Move'}
        </button>
      </form>
      <ErrorBanner error={move.error ?? customers.error} />
      <p className="muted">Deleting removes the agent with its metrics, events, backups and tunnels. A device that still runs the agent can register again.</p>
      <ConfirmButton
        label="Delete agent"
        question={`Delete ${agent.name}?`}
        busyLabel="Deleting…"
        onConfirm={() =>
          guard(async () => {
            await api(`/agents/${encodeURIComponent(agent.id)}`, { method: 'DELETE' });
            navigate('/agents');
          })
        }
      />
      <ErrorBanner error={deleteError} />
    </div>
  );
}
