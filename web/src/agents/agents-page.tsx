// The agents, a page at a time ("Load more"), with search (name, hostname, IP, customer), filters
// (customer, status, platform, tag) and the sort kept in the URL, so a reload or a shared link shows the
// same list, and the columns the technician chose kept in the browser. The server filters and sorts:
// with 10,000 agents the page loads 100 of them, not all. "Export CSV" saves the whole filtered list;
// checkboxes (or "all matching the filter") pick agents for a bulk action.
import { useEffect, useMemo, useState } from 'react';
import { api } from '../api/client';
import { PLATFORM_LABELS, STATUSES, type Agent, type AgentTag, type Customer, type Platform } from '../api/types';
import { setQuery, useQuery } from '../router';
import { Empty, ErrorBanner, Loading, LoadMore } from '../ui/widgets';
import { usePagedList } from '../use-paged-list';
import { useResource } from '../use-resource';
import { AgentTable, sortColumn } from './agent-table';
import { PreRegisterForm } from './pre-register-form';
import { CustomerOptions } from '../ui/customer-options';
import { ExportCsvButton } from './export-csv';
import { SelectionBar, useAgentSelection } from './agent-selection';
import { Allowed, useAccess } from '../auth/access';
import { useColumnChoice } from './column-choice';
import { ColumnChooserPanel, useColumnChooser } from './column-chooser';
import './agents.css';

const REFRESH_MS = 30_000;
const SEARCH_DELAY_MS = 250;
const PAGE = 100;

export function AgentsPage() {
  const query = useQuery();
  const filters = {
    q: query.get('q') ?? '',
    customer_id: query.get('customer') ?? '',
    status: query.get('status') ?? '',
    platform: query.get('platform') ?? '',
    tag: query.get('tag') ?? '',
  };
  const sort = sortColumn(query.get('sort'));
  const descending = query.get('dir') === 'desc';
  const listQuery = { ...filters, sort, order: descending ? 'desc' : undefined };
  const agents = usePagedList<Agent>('/agents', listQuery, { pageSize: PAGE, refreshMs: REFRESH_MS });
  const customers = useResource((signal) => api<Customer[]>('/customers', { signal }), []);
  const tags = useResource((signal) => api<AgentTag[]>('/agents/tags', { signal }), []);
  // Tags ignore case: the URL's spelling picks the option of the same tag.
  const knownTag = tags.data?.find((t) => t.tag.toLowerCase() === filters.tag.toLowerCase());
  const customerMap = useMemo(() => new Map((customers.data ?? []).map((c) => [c.id, c])), [customers.data]);
  const selection = useAgentSelection(JSON.stringify(filters));
  // Picking agents is only for a bulk action, which a read user may not start.
  const canWrite = useAccess().canWrite;
  const columns = useColumnChoice();
  const chooser = useColumnChooser();

  return (
    <section>
      <h1>
        Agents{' '}
        {agents.items && (
          <span className="muted" data-testid="agents-shown">
            ({agents.items.length}
            {agents.hasMore ? '+' : ''})
          </span>
        )}
      </h1>
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
        <label>
          Tag
          <select value={knownTag?.tag ?? filters.tag} onChange={(e) => setQuery({ tag: e.target.value })}>
            <option value="">All</option>
            {/* A tag from a shared link that no agent carries any more still shows as chosen. */}
            {filters.tag && !knownTag && <option value={filters.tag}>{filters.tag}</option>}
            {(tags.data ?? []).map((t) => (
              <option key={t.tag} value={t.tag}>
                {t.tag} ({t.agent_count})
              </option>
            ))}
          </select>
        </label>
        {chooser.button}
        <ExportCsvButton query={listQuery} customers={customerMap} />
      </div>
      {chooser.open && <ColumnChooserPanel id={chooser.panelId} choice={columns} onClose={chooser.close} />}
      <ErrorBanner error={agents.error ?? customers.error ?? tags.error} />
      {canWrite && <SelectionBar selection={selection} filters={filters} shown={agents.items?.length ?? 0} hasMore={agents.hasMore} />}
      {agents.items ? (
        // "No agents match." said a filter hid them when there was none (issue 57, item 21).
        agents.items.length === 0 && !Object.values(filters).some(Boolean) ? (
          <Empty>No agents yet. They appear here when they register: install one with the install commands on a customer&apos;s page, or pre-register one below.</Empty>
        ) : (
          <AgentTable agents={agents.items} columns={columns.shown} customers={customerMap} sort={sort} descending={descending} selection={canWrite ? selection : undefined} />
        )
      ) : (
        !agents.error && <Loading />
      )}
      <LoadMore list={agents} />
      <Allowed need="write">
        <PreRegisterForm customers={customers.data ?? []} onCreated={agents.reload} />
      </Allowed>
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
      <input type="search" placeholder="Name, hostname, IP or customer" value={text} onChange={(e) => setText(e.target.value)} maxLength={255} />
    </label>
  );
}
