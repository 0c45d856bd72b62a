// Recordings of device shells are kept for `device_recording_retention_days` (a setting): once an hour
// the leader deletes older ones from the blob store, and their sessions forget them (the session row
// and its audit entries stay).
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import { PeriodicJob } from '../../platform/periodic-job.js';
import * as repo from '../device-sessions/device-sessions.repo.js';
import type { BlobStorage } from '../firmware/blob-store.js';
import type { SettingsService } from '../settings/settings.service.js';

const INTERVAL_MS = 60 * 60_000;
const BATCH = 500;
const DAY_MS = 24 * 60 * 60_000;

/** Deletes the recordings of sessions started more than `days` before `now`; resolves with how many. */
export async function pruneRecordings(db: Kysely<Database>, blobs: BlobStorage, days: number, now: Date, signal?: AbortSignal): Promise<number> {
  const cutoff = new Date(now.getTime() - days * DAY_MS);
  let pruned = 0;
  for (;;) {
    const expired = await repo.expiredRecordings(db, cutoff, BATCH);
    for (const { id, recording_sha256 } of expired) {
      // The row first: a recording no row names is only disk space; a row naming a deleted blob is a 404 to a user.
      await repo.forgetRecording(db, id);
      if (!(await repo.isRecordingKept(db, recording_sha256))) await blobs.remove(recording_sha256);
      pruned++;
    }
    if (expired.length < BATCH || signal?.aborted) return pruned;
  }
}

export function recordingRetentionJob(db: Kysely<Database>, blobs: BlobStorage, settings: SettingsService, clock: Clock, logger: Logger): PeriodicJob {
  return new PeriodicJob('device recording retention', clock, INTERVAL_MS, logger, async (signal) => {
    const days = (await settings.device()).device_recording_retention_days;
    const pruned = await pruneRecordings(db, blobs, days, clock.now(), signal);
    if (pruned > 0) logger.info({ pruned }, 'deleted device shell recordings past their retention');
  });
}
