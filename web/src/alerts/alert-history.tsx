// Every alert, open ones first then newest, with the filters an on-call technician asks for afterwards
// (customer, agent, state, rule, a time range) kept in the URL, a page at a time with "Load more". The
// table scrolls inside its frame on a phone; the page never scrolls sideways.
import { useId } from 'react';
import { api } from '../api/client';
import { setQuery, useQuery } from '../router';
import { CustomerOptions } from '../ui/customer-options';
import { formatDateTime } from '../ui/format';
import { Empty, ErrorBanner, Loading, LoadMore } from '../ui/widgets';
import { usePagedList } from '../use-paged-list';
import { useResource } from '../use-resource';
import { AgentLink, AlertStateBadge, AlertTrail, customerName, SuppressedBadge } from './alert-card';
import { KIND_LABELS, type Alert, type AlertRule } from './alert-types';
import { localInputValue, localToIso } from './time-input';
import type { Directory } from './use-directory';
import { TableFrame } from '../ui/table-frame';

const REFRESH_MS = 15_000;
const PAGE = 50;
const STATES = ['open', 'firing', 'acknowledged', 'resolved'] as const;

export function AlertHistory({ directory }: { directory: Directory }) {
  const q = useQuery();
  const filters = {
    customer_id: q.get('customer_id') ?? undefined,
    agent_id: q.get('agent_id') ?? undefined,
    state: STATES.find((s) => s === q.get('state')),
    rule_id: q.get('rule_id') ?? undefined,
    from: q.get('from') ?? undefined,
    to: q.get('to') ?? undefined,
  };
  const list = usePagedList<Alert>('/alerts', filters, { pageSize: PAGE, refreshMs: REFRESH_MS });
  const rules = useResource((signal) => api<AlertRule[]>('/alert-rules', { signal }), []);
  const ids = useId();
  const filtered = Object.values(filters).some(Boolean);
  const setTime = (key: 'from' | 'to', local: string) => setQuery({ [key]: local ? localToIso(local) : undefined });

  return (
    <section aria-label="Alert history">
      <div className="row alert-filters" role="search">
        <div className="field">
          <label htmlFor={`${ids}-customer`}>Customer</label>
          <select id={`${ids}-customer`} value={filters.customer_id ?? ''} onChange={(e) => setQuery({ customer_id: e.target.value || undefined })}>
            <CustomerOptions customers={directory.customers} emptyLabel="All customers" />
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${ids}-agent`}>Agent</label>
          <select id={`${ids}-agent`} value={filters.agent_id ?? ''} onChange={(e) => setQuery({ agent_id: e.target.value || undefined })}>
            <option value="">All agents</option>
            {directory.agents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${ids}-state`}>State</label>
          <select id={`${ids}-state`} value={filters.state ?? ''} onChange={(e) => setQuery({ state: e.target.value || undefined })}>
            <option value="">All states</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s === 'open' ? 'open (firing, acknowledged)' : s}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${ids}-rule`}>Rule</label>
          <select id={`${ids}-rule`} value={filters.rule_id ?? ''} onChange={(e) => setQuery({ rule_id: e.target.value || undefined })}>
            <option value="">All rules</option>
            {(rules.data ?? []).map((r) => (
              <option key={r.id} value={r.id}>
                {r.name}
              </option>
            ))}
          </select>
        </div>
        <label>
          From
          <input type="datetime-local" value={filters.from ? localInputValue(new Date(filters.from)) : ''} onChange={(e) => setTime('from', e.target.value)} />
        </label>
        <label>
          To
          <input type="datetime-local" value={filters.to ? localInputValue(new Date(filters.to)) : ''} onChange={(e) => setTime('to', e.target.value)} />
        </label>
        {filtered && (
          <button type="button" onClick={() => setQuery({ customer_id: undefined, agent_id: undefined, state: undefined, rule_id: undefined, from: undefined, to: undefined })}>
            Clear filters
          </button>
        )}
      </div>
      <ErrorBanner error={list.error} />
      {!list.items ? (
        !list.error && <Loading />
      ) : list.items.length === 0 ? (
        <Empty>{filtered ? 'No alerts match these filters.' : 'No alerts yet.'}</Empty>
      ) : (
        <TableFrame label="Alert history">
          <table className="stack-table alert-history" data-testid="alert-history-table">
            <thead>
              <tr>
                <th>State</th>
                <th>Alert</th>
                <th>Agent</th>
                <th>Customer</th>
                <th>Fired</th>
                <th>Resolved</th>
              </tr>
            </thead>
            <tbody>
              {list.items.map((a) => (
                <tr key={a.id} data-testid="alert-history-row">
                  <td data-label="State">
                    <AlertStateBadge state={a.state} />
                    {a.suppressed && <SuppressedBadge />}
                  </td>
                  <td data-label="Alert" className="alert-history-what">
                    <strong>{a.rule_name}</strong> {a.label && <code>{a.label}</code>} <span className="muted">{KIND_LABELS[a.kind] ?? a.kind}</span>
                    <div>{a.summary}</div>
                    <AlertTrail alert={a} />
                    {a.delivery_error && <div className="alert-delivery-error">Notification not delivered: {a.delivery_error}</div>}
                  </td>
                  <td data-label="Agent">
                    <AgentLink alert={a} />
                  </td>
                  <td data-label="Customer">{customerName(directory.customerById, a.customer_id)}</td>
                  <td data-label="Fired" className="nowrap">
                    <time dateTime={a.fired_at}>{formatDateTime(a.fired_at)}</time>
                  </td>
                  <td data-label="Resolved" className="nowrap">{a.resolved_at ? <time dateTime={a.resolved_at}>{formatDateTime(a.resolved_at)}</time> : <span className="muted">open</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
      <LoadMore list={list} />
    </section>
  );
}
