// "Export CSV": the list as it is filtered and sorted now, every page of it (not only the rows loaded),
// with the table's columns and texts (agent-columns.tsx), saved as a file.
import { apiNextPage, apiPage, saveFile, type RequestOptions } from '../api/client';
import type { Agent, Customer } from '../api/types';
import { useSubmit } from '../ui/use-submit';
import { ErrorBanner } from '../ui/widgets';
import { AGENT_COLUMNS } from './agent-columns';
import { toCsv } from './csv';

/** The API's largest page: a 10,000-agent fleet is ten requests. */
const PAGE = 1000;

async function allAgents(query: NonNullable<RequestOptions['query']>): Promise<Agent[]> {
  let page = await apiPage<Agent>('/agents', { query: { ...query, limit: PAGE } });
  const agents = [...page.items];
  while (page.next) {
    page = await apiNextPage<Agent>(page.next);
    agents.push(...page.items);
  }
  return agents;
}

export function ExportCsvButton({ query, customers }: { query: NonNullable<RequestOptions['query']>; customers: ReadonlyMap<number, Customer> }) {
  const { busy, error, submit } = useSubmit(async () => {
    const agents = await allAgents(query);
    const rows = agents.map((a) => AGENT_COLUMNS.map((c) => c.text(a, customers)));
    saveFile(`agents-${new Date().toISOString().slice(0, 10)}.csv`, toCsv(AGENT_COLUMNS.map((c) => c.label), rows), 'text/csv;charset=utf-8');
  });
  return (
    <>
      <button type="button" onClick={() => void submit()} disabled={busy} data-testid="export-csv">
        {busy ? 'Exporting…' : 'Export CSV'}
      </button>
      <ErrorBanner error={error} />
    </>
  );
}
