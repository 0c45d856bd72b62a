// All agents with search and filters (customer, status, platform) kept in the URL, so a reload or a
// shared link shows the same list. The server filters; the table sorts.
import { useEffect, useMemo, useState } from 'react';
import { api } from '../api/client';
import { PLATFORM_LABELS, STATUSES, type Agent, type Customer, type Platform } from '../api/types';
import { setQuery, useQuery } from '../router';
import { ErrorBanner, Loading } from '../ui/widgets';
import { useResource } from '../use-resource';
import { AgentTable } from './agent-table';
import { PreRegisterForm } from './pre-register-form';
import { CustomerOptions } from '../ui/customer-options';

const REFRESH_MS = 30_000;
const SEARCH_DELAY_MS = 250;

export function AgentsPage() {
  const query = useQuery();
  const filters = {
    q: query.get('q') ?? '',
    customer_id: query.get('customer') ?? '',
    status: query.get('status') ?? '',
    platform: query.get('platform') ?? '',
  };
  const agents = useResource(
    (signal) => api<Agent[]>('/agents', { signal, query: filters }),
    [filters.q, filters.customer_id, filters.status, filters.platform],
    { refreshMs: REFRESH_MS },
  );
  const customers = useResource((signal) => api<Customer[]>('/customers', { signal }), []);
  const customerMap = useMemo(() => new Map((customers.data ?? []).map((c) => [c.id, c])), [customers.data]);

  return (
    <section>
      <h1>Agents {agents.data && <span className="muted">({agents.data.length})</span>}</h1>
      <div className="row" role="search">
        <SearchBox value={filters.q} />
        <label>
          Customer
          <select value={filters.customer_id} onChange={(e) => setQuery({ customer: e.target.value })}>
            <CustomerOptions customers={customers.data ?? []} emptyLabel="All" />
          </select>
        </label>
        <label>
          Status
          <select value={filters.status} onChange={(e) => setQuery({ status: e.target.value })}>
            <option value="">All</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Platform
          <select value={filters.platform} onChange={(e) => setQuery({ platform: e.target.value })}>
            <option value="">All</option>
            {(Object.keys(PLATFORM_LABELS) as Platform[]).map((p) => (
              <option key={p} value={p}>
                {PLATFORM_LABELS[p]}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorBanner error={agents.error ?? customers.error} />
      {agents.data ? (
        <AgentTable agents={agents.data} customers={customerMap} sort={query.get('sort') ?? 'name'} descending={query.get('dir') === 'desc'} />
      ) : (
        !agents.error && <Loading />
      )}
      <PreRegisterForm customers={customers.data ?? []} onCreated={agents.reload} />
    </section>
  );
}

/** Typing updates the URL (and so the list) after a short pause, not on every key. */
function SearchBox({ value }: { value: string }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  useEffect(() => {
    if (text === value) return;
    const timer = setTimeout(() => setQuery({ q: text.trim() || undefined }), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [text, value]);
  return (
    <label>
      Search
      <input type="search" placeholder="Name or hostname" value={text} onChange={(e) => setText(e.target.value)} maxLength={255} />
    </label>
  );
}
