// Metric reads for operators: access is the agent's (404 outside the caller's scope), time ranges
// default to the last 24 hours, and the summary's range may hold at most 10,000 buckets.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../platform/errors.js';
import type { Clock } from '../../platform/clock.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import type { Caller } from '../auth/caller.js';
import type { AgentService } from '../agents/agents.service.js';
import { bucketCount, MAX_BUCKETS } from './bucket.js';
import { interfaceRates, latestSamples, rawSamples, summarize, type RateRow, type SampleRow, type SummaryRow } from './metrics.repo.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RangeInput {
  from?: string | undefined;
  to?: string | undefined;
}

export class MetricsService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly agents: AgentService,
    private readonly clock: Clock,
  ) {}

  async raw(caller: Caller, agentId: string, q: RangeInput & { metric?: string | undefined; label?: string | undefined }, page: PageRequest): Promise<Page<SampleRow>> {
    await this.agents.get(caller, agentId);
    const range = this.#range(q);
    return rawSamples(this.db, { agentId, metrics: q.metric ? [q.metric] : null, label: q.label ?? null, ...range }, page);
  }

  async summary(caller: Caller, agentId: string, q: RangeInput & { metric: string; label?: string | undefined; bucket: number }): Promise<SummaryRow[]> {
    await this.agents.get(caller, agentId);
    const range = this.#range(q);
    checkBucketCount(range, q.bucket);
    return summarize(this.db, { agentId, metrics: [q.metric], label: q.label ?? null, ...range }, q.bucket);
  }

  /** Per step, or with `bucket` (seconds) averaged per bucket under the summary's 10,000-bucket limit. */
  async rates(caller: Caller, agentId: string, q: RangeInput & { interface?: string | undefined; bucket?: number | undefined }, page: PageRequest): Promise<Page<RateRow>> {
    await this.agents.get(caller, agentId);
    const range = this.#range(q);
    if (q.bucket !== undefined) checkBucketCount(range, q.bucket);
    return interfaceRates(this.db, { agentId, metrics: null, label: q.interface ?? null, ...range }, page, q.bucket ?? null);
  }

  async latest(caller: Caller, agentId: string): Promise<SampleRow[]> {
    await this.agents.get(caller, agentId);
    return latestSamples(this.db, agentId);
  }

  /** `to` defaults to now and `from` to 24 hours before `to`; a reversed range is a client error. */
  #range(q: RangeInput): { from: Date; to: Date } {
    const to = q.to !== undefined ? new Date(q.to) : this.clock.now();
    const from = q.from !== undefined ? new Date(q.from) : new Date(to.getTime() - DAY_MS);
    if (from > to) {
      throw new AppError('VALIDATION_ERROR', '`from` must not be after `to`', { details: [{ path: 'from', message: 'must not be after `to`' }] });
    }
    // No sample is older than 1970; clamping keeps a far-past default (`to` minus 24 hours) inside
    // the database's calendar without changing any answer.
    const clamp = (d: Date) => (d.getTime() < 0 ? new Date(0) : d);
    return { from: clamp(from), to: clamp(to) };
  }
}

function checkBucketCount(range: { from: Date; to: Date }, bucketSeconds: number): void {
  const buckets = bucketCount(range.from, range.to, bucketSeconds);
  if (buckets > MAX_BUCKETS) {
    throw new AppError('VALIDATION_ERROR', `The range holds ${buckets} buckets; at most ${MAX_BUCKETS} are allowed`, {
      details: [{ path: 'bucket', message: `at most ${MAX_BUCKETS} buckets in the range (got ${buckets})` }],
    });
  }
}
