// Alert rules on checks' states (issue 61): the rule kinds' check constraint takes check_state.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const BEFORE = `'agent_offline', 'metric_threshold', 'certificate_expiry', 'task_failed', 'backup_age', 'update_pending'`;

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await sql.raw(`alter table alert_rules drop constraint alert_rules_kind_check, add constraint alert_rules_kind_check check (kind in (${BEFORE}, 'check_state'))`).execute(db);
  },
  async down(db: Kysely<unknown>) {
    await sql`delete from alert_rules where kind = 'check_state'`.execute(db);
    await sql.raw(`alter table alert_rules drop constraint alert_rules_kind_check, add constraint alert_rules_kind_check check (kind in (${BEFORE}))`).execute(db);
  },
});

export default migration;
