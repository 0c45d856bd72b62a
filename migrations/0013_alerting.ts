// Alerting (issue 31): notification channels (settings in clear, secrets sealed with the server's key,
// a delivery status), alert rules with their channels, alerts (incidents: one open per rule, agent and
// label), the running state of duration thresholds, maintenance windows, and the notification outbox
// the dispatcher delivers from. Three default rules (offline 5 min, disk 90 %, certificate 14 days)
// exist on every install, with no channel until one is chosen. The update flag gets the time it was
// set, for the "update not applied within N hours" rule.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const CHANNEL_TYPES = `'email', 'webhook', 'ntfy', 'teams', 'slack', 'discord', 'telegram'`;
const RULE_KINDS = `'agent_offline', 'metric_threshold', 'certificate_expiry', 'task_failed', 'backup_age', 'update_pending'`;

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('notification_channels')
      .addColumn('id', 'serial', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull().check(sql.raw(`type in (${CHANNEL_TYPES})`)))
      .addColumn('customer_id', 'integer', (c) => c.references('customers.id').onDelete('cascade'))
      .addColumn('settings', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
      .addColumn('sealed_secrets', 'text')
      .addColumn('secret_hints', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
      .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('last_attempt_at', 'timestamptz')
      .addColumn('last_delivered_at', 'timestamptz')
      .addColumn('last_error', 'text')
      .addColumn('failing_since', 'timestamptz')
      .execute();

    await db.schema
      .createTable('alert_rules')
      .addColumn('id', 'serial', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull().check(sql.raw(`kind in (${RULE_KINDS})`)))
      .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
      .addColumn('customer_id', 'integer', (c) => c.references('customers.id').onDelete('cascade'))
      .addColumn('agent_id', 'text', (c) => c.references('agents.id').onDelete('cascade'))
      .addColumn('params', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
      .addColumn('reminder_minutes', 'integer')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();

    await db.schema
      .createTable('alert_rule_channels')
      .addColumn('rule_id', 'integer', (c) => c.notNull().references('alert_rules.id').onDelete('cascade'))
      .addColumn('channel_id', 'integer', (c) => c.notNull().references('notification_channels.id').onDelete('cascade'))
      .addPrimaryKeyConstraint('alert_rule_channels_pk', ['rule_id', 'channel_id'])
      .execute();
    await db.schema.createIndex('alert_rule_channels_channel').on('alert_rule_channels').column('channel_id').execute();

    await db.schema
      .createTable('alerts')
      .addColumn('id', 'serial', (c) => c.primaryKey())
      // A deleted rule leaves its history (named by rule_name and kind); its open alerts are resolved first.
      .addColumn('rule_id', 'integer', (c) => c.references('alert_rules.id').onDelete('set null'))
      .addColumn('rule_name', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('label', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('firing', 'acknowledged', 'resolved')`))
      .addColumn('suppressed', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('summary', 'text', (c) => c.notNull())
      .addColumn('value', 'float8')
      .addColumn('threshold', 'float8')
      .addColumn('since', 'timestamptz', (c) => c.notNull())
      .addColumn('fired_at', 'timestamptz', (c) => c.notNull())
      .addColumn('acknowledged_at', 'timestamptz')
      .addColumn('acknowledged_by', 'text')
      .addColumn('ack_comment', 'text')
      .addColumn('resolved_at', 'timestamptz')
      .addColumn('resolved_by', 'text')
      .addColumn('resolve_comment', 'text')
      .addColumn('next_reminder_at', 'timestamptz')
      .addColumn('delivery_error', 'text')
      .execute();
    // One open alert per rule, agent and label: a second instance or a repeated evaluation cannot fire twice.
    await sql`create unique index alerts_one_open on alerts (rule_id, agent_id, label) where state <> 'resolved'`.execute(db);
    await sql`create index alerts_by_time on alerts (fired_at desc, id desc)`.execute(db);
    await sql`create index alerts_by_agent on alerts (agent_id, fired_at desc)`.execute(db);
    await sql`create index alerts_open on alerts (state) where state <> 'resolved'`.execute(db);

    await db.schema
      .createTable('alert_conditions')
      .addColumn('rule_id', 'integer', (c) => c.notNull().references('alert_rules.id').onDelete('cascade'))
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('breaching_since', 'timestamptz')
      .addColumn('clearing_since', 'timestamptz')
      .addPrimaryKeyConstraint('alert_conditions_pk', ['rule_id', 'agent_id', 'label'])
      .execute();

    await db.schema
      .createTable('maintenance_windows')
      .addColumn('id', 'serial', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'integer', (c) => c.references('customers.id').onDelete('cascade'))
      .addColumn('agent_id', 'text', (c) => c.references('agents.id').onDelete('cascade'))
      .addColumn('starts_at', 'timestamptz')
      .addColumn('ends_at', 'timestamptz')
      .addColumn('cron', 'text')
      .addColumn('duration_minutes', 'integer')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addCheckConstraint(
        'maintenance_window_when',
        sql`(starts_at is not null and ends_at is not null and ends_at > starts_at and cron is null) or (cron is not null and duration_minutes > 0)`,
      )
      .execute();

    await db.schema
      .createTable('notification_outbox')
      .addColumn('id', 'serial', (c) => c.primaryKey())
      .addColumn('channel_id', 'integer', (c) => c.notNull().references('notification_channels.id').onDelete('cascade'))
      .addColumn('alert_id', 'integer', (c) => c.references('alerts.id').onDelete('cascade'))
      .addColumn('event', 'text', (c) => c.notNull().check(sql`event in ('firing', 'resolved', 'reminder', 'flapping', 'acknowledged')`))
      .addColumn('payload', 'jsonb', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('due_at', 'timestamptz', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('claimed_until', 'timestamptz')
      .addColumn('delivery_id', 'text')
      .addColumn('last_error', 'text')
      .addColumn('delivered_at', 'timestamptz')
      .addColumn('failed_at', 'timestamptz')
      .execute();
    await sql`create index notification_outbox_due on notification_outbox (due_at) where delivered_at is null and failed_at is null`.execute(db);
    await sql`create index notification_outbox_alert on notification_outbox (alert_id)`.execute(db);

    await db.schema.alterTable('agents').addColumn('update_requested_at', 'timestamptz').execute();

    const rules: Array<[string, string, object]> = [
      ['Agent offline for 5 minutes', 'agent_offline', { minutes: 5, status: 'offline' }],
      [
        'Disk over 90 %',
        'metric_threshold',
        { metric: 'disk_used_percent', operator: '>', threshold: 90, for_seconds: 300, recovery_threshold: 85, recovery_seconds: 300 },
      ],
      ['Certificate in use expires within 14 days', 'certificate_expiry', { days: 14 }],
    ];
    for (const [name, kind, params] of rules) {
      await sql`insert into alert_rules (name, kind, params) values (${name}, ${kind}, ${JSON.stringify(params)}::jsonb)`.execute(db);
    }
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('agents').dropColumn('update_requested_at').execute();
    for (const table of ['notification_outbox', 'maintenance_windows', 'alert_conditions', 'alerts', 'alert_rule_channels', 'alert_rules', 'notification_channels']) {
      await db.schema.dropTable(table).execute();
    }
  },
});

export default migration;
