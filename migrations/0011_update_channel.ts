// The update channel (issue 30): the on-device updater's latest report on each agent (what it is doing
// or why it gave up: installing, healthy, rolled_back, rollback_failed, refused), and a firmware's
// detached Ed25519 signature (base64; made offline, verified by the updater with the public key).
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('agents')
      .addColumn('updater_state', 'text', (c) => c.check(sql`updater_state in ('installing', 'healthy', 'rolled_back', 'rollback_failed', 'refused')`))
      .addColumn('updater_version', 'text')
      .addColumn('updater_message', 'text')
      .addColumn('updater_reported_at', 'timestamptz')
      .execute();
    await db.schema.alterTable('firmware').addColumn('signature', 'text').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('firmware').dropColumn('signature').execute();
    await db.schema
      .alterTable('agents')
      .dropColumn('updater_state')
      .dropColumn('updater_version')
      .dropColumn('updater_message')
      .dropColumn('updater_reported_at')
      .execute();
  },
});

export default migration;
