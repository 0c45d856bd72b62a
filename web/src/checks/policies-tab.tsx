// The check policies: who each applies to, its checks, how many agents it covers now; a form to create
// one and the same form to edit one, and delete after asking (its checks leave every agent with their
// history). Changing needs write with every customer (`server-wide`), as the server asks.
import { useState } from 'react';
import { api } from '../api/client';
import type { Customer } from '../api/types';
import { PLATFORM_LABELS } from '../api/types';
import { Allowed } from '../auth/access';
import { TableFrame } from '../ui/table-frame';
import { useActionError } from '../ui/use-action-error';
import { ActionsHeader, Badge, ConfirmButton, Empty, ErrorBanner, Loading } from '../ui/widgets';
import { useResource } from '../use-resource';
import { KIND_LABELS, type Policy } from './check-types';
import { PolicyForm } from './policy-form';

/** "customers 1001 Acme; tags web, lob; Linux": every list that must match, or a note that none is set. */
function appliesTo(policy: Policy, customerById: ReadonlyMap<number, Customer>): string {
  const parts = [
    policy.customer_ids.length ? `customers ${policy.customer_ids.map((id) => customerById.get(id)?.name ?? `#${id}`).join(', ')}` : '',
    policy.tags.length ? `tags ${policy.tags.join(', ')}` : '',
    policy.platforms.length ? policy.platforms.map((p) => PLATFORM_LABELS[p]).join(', ') : '',
  ].filter(Boolean);
  return parts.length ? parts.join('; ') : 'no agent (nothing chosen)';
}

export function PoliciesTab() {
  const policies = useResource((signal) => api<Policy[]>('/check-policies', { signal }), []);
  const customers = useResource((signal) => api<Customer[]>('/customers', { signal }), []);
  // null: the "New policy" form; a policy: editing it; undefined: no form open.
  const [editing, setEditing] = useState<Policy | null>();
  const { error, guard } = useActionError();
  const customerById = new Map((customers.data ?? []).map((c) => [c.id, c]));
  const remove = (policy: Policy) =>
    guard(async () => {
      await api(`/check-policies/${policy.id}`, { method: 'DELETE' });
      if (editing?.id === policy.id) setEditing(undefined);
      policies.reload();
    });

  return (
    <section aria-label="Check policies">
      <div className="row">
        <Allowed need="server-wide">
          <button type="button" className="primary" onClick={() => setEditing(null)} disabled={editing === null}>
            New policy
          </button>
        </Allowed>
        <span className="muted">Each agent runs the checks of every enabled policy that applies to it.</span>
      </div>
      {editing !== undefined && (
        <PolicyForm
          key={editing?.id ?? 'new'}
          policy={editing}
          customers={customers.data ?? []}
          onCancel={() => setEditing(undefined)}
          onSaved={() => {
            setEditing(undefined);
            policies.reload();
          }}
        />
      )}
      <ErrorBanner error={policies.error ?? customers.error} />
      <ErrorBanner error={error} />
      {!policies.data ? (
        !policies.error && <Loading />
      ) : policies.data.length === 0 ? (
        <Empty>No policies yet: agents run no checks.</Empty>
      ) : (
        <TableFrame label="Check policies">
          <table className="stack-table alerting-table" data-testid="policies-table">
            <thead>
              <tr>
                <th>Policy</th>
                <th>Applies to</th>
                <th>Checks</th>
                <th>Agents</th>
                <th>Enabled</th>
                <ActionsHeader />
              </tr>
            </thead>
            <tbody>
              {policies.data.map((p) => (
                <tr key={p.id} data-testid="policy-row">
                  <td>
                    <strong>{p.name}</strong>
                    {p.description ? <div className="muted">{p.description}</div> : null}
                  </td>
                  <td data-label="Applies to">{appliesTo(p, customerById)}</td>
                  <td data-label="Checks">
                    {p.checks.length}
                    <div className="muted">{p.checks.map((c) => `${c.name} (${KIND_LABELS[c.kind]})`).join(', ')}</div>
                  </td>
                  <td data-label="Agents">{p.agent_count}</td>
                  <td data-label="Enabled">{p.enabled ? <Badge tone="good">on</Badge> : <Badge tone="muted">off</Badge>}</td>
                  <td>
                    <Allowed need="server-wide">
                      <div className="row-actions">
                        <button type="button" onClick={() => setEditing(p)}>
                          Edit
                        </button>
                        <ConfirmButton label="Delete" question={`Delete policy ${p.name}? Its checks leave every agent, with their history.`} busyLabel="Deleting…" onConfirm={() => remove(p)} />
                      </div>
                    </Allowed>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
    </section>
  );
}
