// Results of checks, as agents send them (check_results frames): kept only for checks the agent was given
// on its socket (others are ignored and counted), gathered for up to a second and written together: the
// latest state of each check, a history row for every change of state, and perfdata as metric samples
// ("check_perf", label "<check id>/<label>", in base units) with the metrics' retention and compression.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Logger } from '../../platform/logger.js';
import type { LayoutRegistry } from '../metrics/layouts.js';
import type { ExtractedSample } from '../metrics/extract-samples.js';
import type { CheckResult, CheckResultsFrame } from './check-protocol.js';
import type { CheckSets } from './check-sets.js';
import { baseValue } from './perfdata-units.js';

const FLUSH_MS = 1000;
const MAX_BUFFERED = 5000;
const ROWS_PER_STATEMENT = 1000;

interface Accepted extends CheckResult {
  agentId: string;
}

export interface StateChange {
  agentId: string;
  checkId: string;
  state: number;
  previous: number | null;
  output: string;
  at: Date;
}

export interface CheckResultCounts {
  received: number;
  ignored: number;
}

export class CheckResults {
  readonly counts: CheckResultCounts = { received: 0, ignored: 0 };
  #buffer: Accepted[] = [];
  #timer: NodeJS.Timeout | null = null;
  #writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly sets: CheckSets,
    private readonly layouts: LayoutRegistry,
    private readonly logger: Logger,
    private readonly changed: (change: StateChange) => void,
  ) {}

  async receive(agentId: string, frame: CheckResultsFrame): Promise<void> {
    this.counts.received += frame.results.length;
    const given = this.sets.forResults(agentId, frame.version) ?? (await this.sets.whenGiven(agentId));
    for (const result of frame.results) {
      if (given?.checkIds.has(result.check_id)) this.#buffer.push({ ...result, agentId });
      else this.counts.ignored++;
    }
    if (this.#buffer.length >= MAX_BUFFERED) this.flush();
    else this.#timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** Writes what is gathered; resolves when it is written. */
  flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const batch = this.#buffer;
    this.#buffer = [];
    if (batch.length > 0) {
      this.#writing = this.#writing
        .then(() => this.#write(batch))
        .catch((err: unknown) => this.logger.warn({ err, results: batch.length }, 'could not store results of checks'));
    }
    return this.#writing;
  }

  async #write(batch: Accepted[]): Promise<void> {
    batch.sort((a, b) => a.ran_at.localeCompare(b.ran_at));
    const previous = await this.#currentStates(batch);
    const changes: StateChange[] = [];
    const latest = new Map<string, Accepted>();
    for (const r of batch) {
      const key = `${r.agentId}\u0000${r.check_id}`;
      const before = previous.get(key);
      if (before === undefined || before !== r.state) changes.push({ agentId: r.agentId, checkId: r.check_id, state: r.state, previous: before ?? null, output: r.output, at: new Date(r.ran_at) });
      previous.set(key, r.state);
      latest.set(key, r);
    }
    // Layouts first: the registry writes with its own connection, which an open transaction would wait for (PGlite has one).
    const perf = await this.#perfRows(batch);
    await this.db.transaction().execute(async (trx) => {
      for (const rows of chunks([...latest.values()], ROWS_PER_STATEMENT)) await upsertStates(trx, rows);
      for (const rows of chunks(changes, ROWS_PER_STATEMENT)) {
        await trx.insertInto('check_state_history').values(rows.map((c) => ({ agent_id: c.agentId, check_id: c.checkId, state: c.state, output: c.output, at: c.at }))).execute();
      }
      for (const rows of chunks(perf, ROWS_PER_STATEMENT)) await trx.insertInto('metric_points').values(rows).execute();
    });
    for (const change of changes) this.changed(change);
  }

  async #currentStates(batch: readonly Accepted[]): Promise<Map<string, number>> {
    const agentIds = [...new Set(batch.map((r) => r.agentId))];
    const rows = await this.db.selectFrom('check_states').select(['agent_id', 'check_id', 'state']).where('agent_id', 'in', agentIds).execute();
    return new Map(rows.map((r) => [`${r.agent_id}\u0000${r.check_id}`, r.state]));
  }

  /** One metric_points row per result with perfdata. */
  async #perfRows(batch: readonly Accepted[]) {
    const withPerf = batch.filter((r) => r.perfdata.length > 0);
    if (withPerf.length === 0) return [];
    const samples: ExtractedSample[][] = withPerf.map((r) => r.perfdata.map((p) => ({ metric: 'check_perf', label: `${r.check_id}/${p.label}`.slice(0, 255), value: baseValue(p.value, p.uom) })));
    const layouts = await this.layouts.idsFor(samples);
    return withPerf.map((r, i) => ({ agent_id: r.agentId, time: new Date(r.ran_at), layout: layouts[i]!, vals: samples[i]!.map((s) => s.value) }));
  }
}

function upsertStates(trx: Kysely<Database>, rows: readonly Accepted[]) {
  return trx
    .insertInto('check_states')
    .values(
      rows.map((r) => ({
        agent_id: r.agentId,
        check_id: r.check_id,
        state: r.state,
        output: r.output,
        perfdata: JSON.stringify(r.perfdata),
        duration_ms: r.duration_ms,
        last_run_at: r.ran_at,
        last_change_at: r.ran_at,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['agent_id', 'check_id']).doUpdateSet({
        state: sql`excluded.state`,
        output: sql`excluded.output`,
        perfdata: sql`excluded.perfdata`,
        duration_ms: sql`excluded.duration_ms`,
        last_run_at: sql`excluded.last_run_at`,
        // The state's age: from the first run in it.
        last_change_at: sql`case when check_states.state = excluded.state then check_states.last_change_at else excluded.last_run_at end`,
      }).where(sql<boolean>`excluded.last_run_at >= check_states.last_run_at`),
    )
    .execute();
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
