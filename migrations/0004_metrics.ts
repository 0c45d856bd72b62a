// Metric samples, stored in two forms that every query reads alike:
//
// - metric_points, the recent ("hot") form: one row per heartbeat holding all its values in one float8
//   array, in the order of a shared layout (metric_layouts: which metric and label each position is).
//   Agents send the same metric/label list heartbeat after heartbeat, so the list is stored once and
//   each heartbeat adds one small row. Measured on PostgreSQL here, against one narrow row per sample:
//   about half the database time per heartbeat, and ~13 instead of ~93 bytes per sample.
// - metric_hours, the compacted form for samples older than METRICS_COMPRESS_AFTER_DAYS: one row per
//   agent, metric, label and hour, with the samples' millisecond offsets and values as arrays and the
//   hour's count/sum/min/max, so long-range summaries read one row per hour instead of every sample.
//
// On TimescaleDB metric_points becomes a hypertable, and TimescaleDB's own compression and retention
// policies (set by the metrics maintenance at start-up) replace the project's compaction; metric_hours
// then stays empty.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = (ctx) => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('metric_layouts')
      .addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      .addColumn('fingerprint', 'text', (c) => c.notNull().unique()) // SHA-256 of the metric/label list
      .addColumn('metrics', sql`text[]`, (c) => c.notNull())
      .addColumn('labels', sql`text[]`, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('metric_points')
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('time', 'timestamptz', (c) => c.notNull())
      // No foreign key: layouts are never deleted, and the check would cost a lookup per heartbeat.
      .addColumn('layout', 'integer', (c) => c.notNull())
      .addColumn('vals', sql`float8[]`, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('metric_points_agent_time_idx').on('metric_points').columns(['agent_id', 'time']).execute();

    await db.schema
      .createTable('metric_hours')
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('metric', 'text', (c) => c.notNull())
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('hour', 'timestamptz', (c) => c.notNull())
      .addColumn('offsets_ms', sql`integer[]`, (c) => c.notNull()) // sample time = hour + offset
      .addColumn('vals', sql`float8[]`, (c) => c.notNull())
      .addColumn('sample_count', 'integer', (c) => c.notNull())
      .addColumn('value_sum', sql`float8`, (c) => c.notNull())
      .addColumn('value_min', sql`float8`, (c) => c.notNull())
      .addColumn('value_max', sql`float8`, (c) => c.notNull())
      .addPrimaryKeyConstraint('metric_hours_pkey', ['agent_id', 'metric', 'label', 'hour'])
      .execute();
    // Retention deletes the oldest hours of all agents at once.
    await db.schema.createIndex('metric_hours_hour_idx').on('metric_hours').column('hour').execute();

    if (ctx.timescale) {
      // Not exercised by this project's CI (no TimescaleDB there); see README "TimescaleDB".
      await sql`create extension if not exists timescaledb`.execute(db);
      await sql`select create_hypertable('metric_points', 'time', chunk_time_interval => interval '1 day')`.execute(db);
      await sql`alter table metric_points set (timescaledb.compress,
        timescaledb.compress_segmentby = 'agent_id', timescaledb.compress_orderby = 'time')`.execute(db);
    }
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('metric_hours').execute();
    await db.schema.dropTable('metric_points').execute();
    await db.schema.dropTable('metric_layouts').execute();
  },
});

export default migration;
