// Table types of alerting (migration 0013): notification channels, alert rules and their channels,
// alerts, threshold conditions, maintenance windows and the notification outbox.
import type { ColumnType, Generated } from 'kysely';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;

export type ChannelType = 'email' | 'webhook' | 'ntfy' | 'teams' | 'slack' | 'discord' | 'telegram';
export type AlertRuleKind = 'agent_offline' | 'metric_threshold' | 'certificate_expiry' | 'task_failed' | 'backup_age' | 'update_pending' | 'check_state';
export type AlertState = 'firing' | 'acknowledged' | 'resolved';
export type NotificationEvent = 'firing' | 'resolved' | 'reminder' | 'flapping' | 'acknowledged';

export interface NotificationChannelsTable {
  id: Generated<number>;
  name: string;
  type: ChannelType;
  customer_id: number | null;
  /** Settings that are not secret (host, port, from, recipients, topic, chat id …). */
  settings: ColumnType<Record<string, unknown>, string, string>;
  /** The secret settings (password, token, webhook URL …) as one JSON object sealed with SecretBox. */
  sealed_secrets: string | null;
  /** Per secret field, the hint shown instead of it. */
  secret_hints: ColumnType<Record<string, string>, string, string>;
  enabled: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
  last_attempt_at: Timestamp | null;
  last_delivered_at: Timestamp | null;
  last_error: string | null;
  failing_since: Timestamp | null;
}

export interface AlertRulesTable {
  id: Generated<number>;
  name: string;
  kind: AlertRuleKind;
  enabled: Generated<boolean>;
  customer_id: number | null;
  agent_id: string | null;
  params: ColumnType<Record<string, unknown>, string, string>;
  reminder_minutes: number | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface AlertRuleChannelsTable {
  rule_id: number;
  channel_id: number;
}

export interface AlertsTable {
  id: Generated<number>;
  rule_id: number | null;
  rule_name: string;
  /** The rule's kind, or `flapping` for the one notice about an agent that keeps changing state. */
  kind: string;
  agent_id: string;
  label: string;
  state: AlertState;
  suppressed: Generated<boolean>;
  summary: string;
  value: number | null;
  threshold: number | null;
  since: Timestamp;
  fired_at: Timestamp;
  acknowledged_at: Timestamp | null;
  acknowledged_by: string | null;
  ack_comment: string | null;
  resolved_at: Timestamp | null;
  resolved_by: string | null;
  resolve_comment: string | null;
  next_reminder_at: Timestamp | null;
  delivery_error: string | null;
}

export interface AlertConditionsTable {
  rule_id: number;
  agent_id: string;
  label: string;
  breaching_since: Timestamp | null;
  clearing_since: Timestamp | null;
}

export interface MaintenanceWindowsTable {
  id: Generated<number>;
  name: string;
  customer_id: number | null;
  agent_id: string | null;
  starts_at: Timestamp | null;
  ends_at: Timestamp | null;
  cron: string | null;
  duration_minutes: number | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface NotificationOutboxTable {
  id: Generated<number>;
  channel_id: number;
  alert_id: number | null;
  event: NotificationEvent;
  /** What the message says about its alert, fixed when it was queued (a NotificationItem). */
  payload: ColumnType<Record<string, unknown>, string, string>;
  created_at: Timestamp;
  due_at: Timestamp;
  attempts: Generated<number>;
  claimed_until: Timestamp | null;
  delivery_id: string | null;
  last_error: string | null;
  delivered_at: Timestamp | null;
  failed_at: Timestamp | null;
}
