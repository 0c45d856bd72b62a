// Every API key of the installation (admin), with the customers for the scope column and the form.
import { api } from '../api/client';
import type { Customer } from '../api/types';
import { useResource } from '../use-resource';
import { ErrorBanner } from '../ui/widgets';
import { ApiKeysPanel } from './api-keys-panel';

export function KeysPage() {
  const customers = useResource((signal) => api<Customer[]>('/customers', { signal }), []);
  return (
    <section>
      <h1>API keys</h1>
      <p className="muted">Keys authenticate agents and scripts. A key scoped to a customer sees and changes only that customer's agents.</p>
      <ErrorBanner error={customers.error} />
      <ApiKeysPanel customers={customers.data ?? []} />
    </section>
  );
}
