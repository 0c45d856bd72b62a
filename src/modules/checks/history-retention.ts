// Check state history is kept as long as metric samples (METRICS_RETENTION_DAYS): a check that flaps all
// day adds a row per change, and nothing else ever removes them. Once an hour the leader deletes older
// rows in batches, so one pass never holds a long lock or a long transaction.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import { PeriodicJob } from '../../platform/periodic-job.js';

const INTERVAL_MS = 60 * 60_000;
const BATCH = 5000;
const DAY_MS = 24 * 60 * 60_000;

/** Deletes history rows older than `days` before `now`; resolves with how many. */
export async function pruneCheckHistory(db: Kysely<Database>, days: number, now: Date, signal?: AbortSignal): Promise<number> {
  const cutoff = new Date(now.getTime() - days * DAY_MS);
  let pruned = 0;
  for (;;) {
    const result = await db
      .deleteFrom('check_state_history')
      .where('id', 'in', (eb) => eb.selectFrom('check_state_history').select('id').where('at', '<', cutoff).limit(BATCH))
      .executeTakeFirst();
    const deleted = Number(result.numDeletedRows);
    pruned += deleted;
    if (deleted < BATCH || signal?.aborted) return pruned;
  }
}

export function checkHistoryRetentionJob(db: Kysely<Database>, days: number, clock: Clock, logger: Logger): PeriodicJob {
  return new PeriodicJob('check history retention', clock, INTERVAL_MS, logger, async (signal) => {
    const pruned = await pruneCheckHistory(db, days, clock.now(), signal);
    if (pruned > 0) logger.info({ pruned, days }, 'deleted check state history past the metrics retention');
  });
}
