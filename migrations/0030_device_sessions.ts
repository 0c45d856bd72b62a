// Hands on the device (issue 59). `agents.capabilities`: what the agent's socket last announced it can do
// beyond the spec's commands (shell, files, processes, services), so the console can hide the rest even
// while the agent is away and on any instance of a cluster. `device_sessions`: every device shell and
// file transfer, who opened it, on which agent, when it ended and why, its bytes, and the shell's
// recording (an asciicast v2 file, gzipped, in the blob store). Kept when the agent is deleted: an MSP
// answers for what its technicians did on a machine after the machine is gone.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('agents')
      .addColumn('capabilities', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
      .execute();
    await db.schema
      .createTable('device_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('agent_name', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'integer')
      .addColumn('user_id', 'integer')
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('started_at', 'timestamptz', (c) => c.notNull())
      .addColumn('ended_at', 'timestamptz')
      .addColumn('end_reason', 'text')
      .addColumn('bytes_in', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('bytes_out', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('recording_sha256', 'text')
      .addColumn('recording_bytes', 'bigint')
      .execute();
    await db.schema.createIndex('device_sessions_agent_started').on('device_sessions').columns(['agent_id', 'started_at']).execute();
    await db.schema.createIndex('device_sessions_user_started').on('device_sessions').columns(['user_id', 'started_at']).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('device_sessions').execute();
    await db.schema.alterTable('agents').dropColumn('capabilities').execute();
  },
});

export default migration;
