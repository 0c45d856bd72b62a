// The TimescaleDB path, isolated here and in migration 0004: when metric_points is a hypertable,
// TimescaleDB compresses its chunks after METRICS_COMPRESS_AFTER_DAYS and drops them after
// METRICS_RETENTION_DAYS through its own background policies, and the project's compaction stays off.
// This project's CI has no TimescaleDB, so this file is not exercised by its tests (README "TimescaleDB").
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** True only when the extension is installed here and metric_points was created as a hypertable. */
export async function metricPointsIsHypertable(db: Kysely<Database>): Promise<boolean> {
  const { rows: ext } = await sql<{ installed: boolean }>`
    select exists (select 1 from pg_extension where extname = 'timescaledb') as installed`.execute(db);
  if (!ext[0]?.installed) return false;
  const { rows } = await sql<{ hypertable: boolean }>`
    select exists (
      select 1 from timescaledb_information.hypertables where hypertable_name = 'metric_points'
    ) as hypertable`.execute(db);
  return rows[0]?.hypertable === true;
}

/** (Re)sets both policies to the configured ages, so a changed setting takes effect on restart. */
export async function applyTimescalePolicies(db: Kysely<Database>, compressAfterDays: number, retentionDays: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`select remove_compression_policy('metric_points', if_exists => true)`.execute(trx);
    await sql`select add_compression_policy('metric_points', compress_after => make_interval(days => ${compressAfterDays}::int))`.execute(trx);
    await sql`select remove_retention_policy('metric_points', if_exists => true)`.execute(trx);
    await sql`select add_retention_policy('metric_points', drop_after => make_interval(days => ${retentionDays}::int))`.execute(trx);
  });
}
