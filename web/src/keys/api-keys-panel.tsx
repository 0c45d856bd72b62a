// API keys: the list (name, hint, permission, scope, expiry and installs of enrollment keys) with delete,
// and a form that creates one and shows the key once. On a customer's page the scope is that customer and the list is its keys.
// A user hands out and deletes keys up to their own role, and only for their customers when limited to some.
import { useState } from 'react';
import { api } from '../api/client';
import type { Customer } from '../api/types';
import { Allowed, useAccess } from '../auth/access';
import { useActionError } from '../ui/use-action-error';
import { ActionsHeader, ConfirmButton, Empty, ErrorBanner, Loading, RelativeTime } from '../ui/widgets';
import { SecretOnce } from '../ui/secret-once';
import { useResource } from '../use-resource';
import { PERMISSIONS, permissionWithin, type ApiKey, type CreatedApiKey, type Permission } from './key-types';
import { useSubmit } from '../ui/use-submit';
import { CustomerOptions } from '../ui/customer-options';
import { TableFrame } from '../ui/table-frame';

export function ApiKeysPanel({ customers, customerId }: { customers: readonly Customer[]; customerId?: number }) {
  const path = customerId === undefined ? '/apikeys' : `/customers/${customerId}/apikeys`;
  const keys = useResource((signal) => api<ApiKey[]>(path, { signal }), [path]);
  const [created, setCreated] = useState<CreatedApiKey>();
  const { error, guard } = useActionError();
  const access = useAccess();
  const customerName = (id: number | null) => (id === null ? 'all customers' : (customers.find((c) => c.id === id)?.name ?? `customer #${id}`));
  const remove = (key: ApiKey) => guard(async () => {
    await api(`/apikeys/${key.id}`, { method: 'DELETE' });
    keys.reload();
  });

  return (
    <section className="api-keys" aria-label="API keys">
      <Allowed need="write">
        <CreateKeyForm
          customers={customers}
          customerId={customerId}
          onCreated={(key) => {
            setCreated(key);
            keys.reload();
          }}
        />
      </Allowed>
      {created && <SecretOnce label={`API key "${created.name}"`} secret={created.key} onDismiss={() => setCreated(undefined)} />}
      <ErrorBanner error={keys.error ?? error} />
      {!keys.data ? (
        !keys.error && <Loading />
      ) : keys.data.length === 0 ? (
        <Empty>No API keys yet.</Empty>
      ) : (
        <TableFrame label="API keys">
          <table data-testid="api-keys-table" className="stack">
            <thead>
              <tr>
                <th>Name</th>
                <th>Key</th>
                <th>Permission</th>
                <th>Scope</th>
                <th>Created</th>
                <th>Expires</th>
                <th>Installs</th>
                <ActionsHeader />
              </tr>
            </thead>
            <tbody>
              {keys.data.map((key) => (
                <tr key={key.id} data-testid="api-key-row">
                  <td>{key.name}</td>
                  <td data-label="Key" className="mono">{key.key_hint}</td>
                  <td data-label="Permission">{key.permissions}</td>
                  <td data-label="Scope">{customerName(key.customer_id)}</td>
                  <td data-label="Created">
                    <RelativeTime iso={key.created_at} />
                  </td>
                  <td data-label="Expires" data-testid="key-expiry">
                    {key.expired ? <span className="badge badge-bad">expired</span> : key.expires_at ? <RelativeTime iso={key.expires_at} /> : <span className="muted">never</span>}
                  </td>
                  <td data-label="Installs">{key.max_uses === null ? key.uses : `${key.uses} of ${key.max_uses}`}</td>
                  <td>
                    {access.canWrite && permissionWithin(key.permissions, access.role) && (
                      <ConfirmButton label="Delete" question={`Delete key "${key.name}"? Whatever uses it stops working.`} busyLabel="Deleting…" onConfirm={() => remove(key)} />
                    )}
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

function CreateKeyForm({ customers, customerId, onCreated }: { customers: readonly Customer[]; customerId?: number; onCreated: (key: CreatedApiKey) => void }) {
  const [name, setName] = useState('');
  const [permissions, setPermissions] = useState<Permission>('read');
  const access = useAccess();
  const [picked, setScope] = useState(customerId === undefined ? '' : String(customerId));
  // A user limited to customers makes keys for one of them: no "All customers" choice, the first preset
  // (the customers may arrive after the form).
  const scope = picked === '' && access.scoped ? String(customers[0]?.id ?? '') : picked;
  const [days, setDays] = useState('');
  const [uses, setUses] = useState('');
  const { busy, error, submit } = useSubmit(async () => {
    const body = {
      name: name.trim(),
      permissions,
      customer_id: scope === '' ? null : Number(scope),
      expires_at: days ? new Date(Date.now() + Number(days) * 86_400_000).toISOString() : null,
      max_uses: uses ? Number(uses) : null,
    };
    onCreated(await api<CreatedApiKey>('/apikeys', { method: 'POST', body }));
    setName('');
  });
  return (
    <form className="card" onSubmit={(e) => void submit(e)} aria-label="Create an API key">
      <h2>Create an API key</h2>
      <div className="row">
        <label>
          Key name
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} placeholder="Agents of Bäckerei" />
        </label>
        <label>
          Permission
          <select value={permissions} onChange={(e) => setPermissions(e.target.value as Permission)}>
            {PERMISSIONS.filter((p) => permissionWithin(p.id, access.role)).map((p) => (
              <option key={p.id} value={p.id}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
        {customerId === undefined && (
          <label>
            Scope
            <select value={scope} onChange={(e) => setScope(e.target.value)}>
              {access.scoped ? (
                customers.map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.number} {c.name}
                  </option>
                ))
              ) : (
                <CustomerOptions customers={customers} emptyLabel="All customers" />
              )}
            </select>
          </label>
        )}
        <label>
          Expires after (days)
          <input name="key-expires-days" type="number" min={1} max={3650} value={days} placeholder="never" onChange={(e) => setDays(e.target.value)} />
        </label>
        <label>
          Installs allowed
          <input name="key-max-uses" type="number" min={1} max={1000000} value={uses} placeholder="unlimited" onChange={(e) => setUses(e.target.value)} />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create key'}
        </button>
      </div>
      <ErrorBanner error={error} />
    </form>
  );
}
