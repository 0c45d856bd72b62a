// Metrics maintenance, hourly: samples older than METRICS_COMPRESS_AFTER_DAYS are compacted into
// metric_hours, and samples older than METRICS_RETENTION_DAYS are deleted. On TimescaleDB its own
// policies do both instead (set once at start-up). Work goes in bounded batches of agents, checks for
// stop between batches, and is safe to run in several servers sharing one database.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import { PeriodicJob } from '../../platform/periodic-job.js';
import { agentIdsAfter, compactPoints, deleteExpiredHours, deleteExpiredPoints } from './compaction.repo.js';
import { applyTimescalePolicies, metricPointsIsHypertable } from './timescale.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;
/** Agents per statement: an hour of minute heartbeats is ~60 rows each, ~1,600 samples. */
const AGENT_BATCH = 100;
const HOURS_PER_DELETE = 10_000;

export interface MetricsMaintenanceOptions {
  retentionDays: number;
  compressAfterDays: number;
  intervalMs?: number;
}

export interface MaintenanceReport {
  mode: 'timescale' | 'compaction';
  /** Heartbeat rows moved into the compacted form. */
  compactedRows: number;
  /** Samples deleted for being older than the retention. */
  deletedSamples: number;
}

export class MetricsMaintenance {
  readonly #job: PeriodicJob;
  #mode: Promise<MaintenanceReport['mode']> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: MetricsMaintenanceOptions,
  ) {
    this.#job = new PeriodicJob('metrics maintenance', clock, options.intervalMs ?? HOUR_MS, logger, (signal) => this.runOnce(signal));
  }

  start(): void {
    this.#job.start();
  }

  stop(): Promise<void> {
    return this.#job.stop();
  }

  /** One pass: compaction and retention as of now. */
  async runOnce(signal?: AbortSignal): Promise<MaintenanceReport> {
    const mode = await this.#modeOnce();
    const now = this.clock.now().getTime();
    if (mode === 'timescale') return { mode, compactedRows: 0, deletedSamples: 0 };
    // Whole hours only, so an hour is compacted in one go rather than merged piece by piece.
    const compactBefore = new Date(Math.floor((now - this.options.compressAfterDays * DAY_MS) / HOUR_MS) * HOUR_MS);
    const retentionCutoff = new Date(now - this.options.retentionDays * DAY_MS);
    const report = { mode, ...(await this.compactAndExpire(compactBefore, retentionCutoff, signal)) };
    if (report.compactedRows > 0 || report.deletedSamples > 0) this.logger.info(report, 'metrics maintenance');
    return report;
  }

  /** Compacts everything older than `compactBefore` and deletes everything older than `retentionCutoff`. */
  async compactAndExpire(compactBefore: Date, retentionCutoff: Date, signal?: AbortSignal): Promise<Omit<MaintenanceReport, 'mode'>> {
    let compactedRows = 0;
    let deletedSamples = 0;
    for (let after: string | null = null; !signal?.aborted; ) {
      const ids = await agentIdsAfter(this.db, after, AGENT_BATCH);
      if (ids.length === 0) break;
      deletedSamples += await deleteExpiredPoints(this.db, ids, retentionCutoff);
      compactedRows += await compactPoints(this.db, ids, compactBefore);
      after = ids[ids.length - 1]!;
    }
    while (!signal?.aborted) {
      const deleted = await deleteExpiredHours(this.db, retentionCutoff, HOURS_PER_DELETE);
      if (deleted === 0) break;
      deletedSamples += deleted;
    }
    return { compactedRows, deletedSamples };
  }

  /** Decided once per process: TimescaleDB's policies (applied here) or the project's own jobs. */
  #modeOnce(): Promise<MaintenanceReport['mode']> {
    this.#mode ??= (async () => {
      if (!(await metricPointsIsHypertable(this.db))) return 'compaction' as const;
      await applyTimescalePolicies(this.db, this.options.compressAfterDays, this.options.retentionDays);
      this.logger.info(this.options, 'metrics: TimescaleDB compression and retention policies set');
      return 'timescale' as const;
    })().catch((err: unknown) => {
      this.#mode = undefined; // decide again next run
      throw err;
    });
    return this.#mode;
  }
}
