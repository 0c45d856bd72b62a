// The agents list's search (issue 57, item 16): `GET /agents?q=` matches name, hostname, primary IP and
// the customer's name. Times the real list query (agents.repo.ts listAgents: first page of 100, sorted by
// name) over 10,000 agents of 200 customers for searches that hit a name, an IP, a customer and nothing
// (the worst case: every agent is checked). Baseline, in the same database and run: the same first page
// without a search, the two alternating run by run. Measured, never asserted.
//
// Environment: BENCH_BACKENDS (PostgreSQL when it answers, else pglite), BENCH_DATABASE_URL,
// BENCH_SEARCH_AGENTS (10000), BENCH_SEARCH_RUNS (30 timed runs of each query after 5 untimed ones).
import { sql, type Kysely } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { listAgents } from '../src/modules/agents/agents.repo.js';
import { backendsFrom, openBackend, positiveNumber } from './lib/backends.js';
import { timeInterleaved } from './lib/stats.js';
import { runWhenMain, type BenchRow } from './lib/table.js';

export const name = 'agent-search';
const log = (message: string) => process.stderr.write(`[${name}] ${message}\n`);
const CUSTOMERS = 200;

async function seed(db: Kysely<Database>, agents: number): Promise<void> {
  await sql`
    insert into customers (number, name)
    select lpad(n::text, 5, '0'), 'Kunde ' || lpad(n::text, 4, '0') || ' GmbH' from generate_series(1, ${CUSTOMERS}) n`.execute(db);
  await sql`
    insert into agents (id, name, hostname, platform, customer_id, primary_ip, last_heartbeat)
    select md5(n::text), 'srv-' || n, 'host-' || n || '.example', (array['linux', 'freebsd', 'windows'])[1 + n % 3],
           (select min(id) from customers) + n % ${CUSTOMERS}, '10.' || (n / 256) || '.' || (n % 256) || '.1', now()
    from generate_series(1, ${agents}) n`.execute(db);
  await sql`vacuum analyze`.execute(db);
}

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const agents = Math.round(positiveNumber(env, 'BENCH_SEARCH_AGENTS', 10_000));
  const runs = Math.round(positiveNumber(env, 'BENCH_SEARCH_RUNS', 30));
  const searches: Array<[string, string]> = [
    ['name', 'srv-123'],
    ['primary IP', '10.7.1'],
    ['customer name', 'Kunde 0042'],
    ['no match', 'nothing-like-this'],
  ];
  const rows: BenchRow[] = [];
  for (const backend of await backendsFrom(env)) {
    const handle = await openBackend(backend, env);
    const base = { benchmark: name, backend, unit: 'ms', baselineLabel: 'unfiltered page ms', better: 'lower' as const };
    if (typeof handle === 'string') {
      rows.push({ ...base, setting: `${agents} agents`, figure: Number.NaN, baseline: Number.NaN, note: handle });
      continue;
    }
    try {
      const db = handle.db;
      log(`${backend}: seeding ${agents} agents of ${CUSTOMERS} customers`);
      await seed(db, agents);
      const page = (q?: string) => async () => (await listAgents(db, { scope: null, q, now: new Date() }, { sort: 'name', descending: false }, { limit: 100, after: null })).items.length;
      for (const [what, q] of searches) {
        const { a: search, b: plain, ratio } = await timeInterleaved(runs, page(q), page());
        log(`${backend}: q=${q} p50 ${search.p50.toFixed(1)} ms (${search.result} on the page), unfiltered p50 ${plain.p50.toFixed(1)} ms`);
        rows.push({
          ...base,
          setting: `${agents} agents, q hits ${what} ("${q}")`,
          figure: search.p50,
          baseline: plain.p50,
          ratio,
          p50Ms: search.p50,
          p99Ms: search.p99,
          note: `${search.result} agents on the first page; ${runs} runs of each, alternating; ratio = median of the pairs' ratios`,
        });
      }
    } finally {
      await handle.close();
    }
  }
  return rows;
}

runWhenMain(import.meta.url, () => run());
