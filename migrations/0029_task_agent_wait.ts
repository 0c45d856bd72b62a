// A single-agent task whose agent is not connected when it falls due waits for it (issue 57: runs due
// while agents reconnected after an instance restart failed at once). `agent_wait_timeout` is how long
// (seconds; null for group tasks, whose bulk action waits on its own); `waiting_until` is set on a run
// while it waits and cleared when its command leaves, so a server that starts again knows which open
// runs sent nothing yet and can take them up instead of closing them as interrupted.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('tasks').addColumn('agent_wait_timeout', 'integer').execute();
    // Single-agent tasks made before get the default wait: the defect was theirs too.
    await sql`update tasks set agent_wait_timeout = 600 where agent_id is not null`.execute(db);
    await db.schema.alterTable('task_runs').addColumn('waiting_until', 'timestamptz').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('task_runs').dropColumn('waiting_until').execute();
    await db.schema.alterTable('tasks').dropColumn('agent_wait_timeout').execute();
  },
});

export default migration;
