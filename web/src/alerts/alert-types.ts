// Shapes of the alerting API's objects (issue 31: /alerts, /alert-rules, /notification-channels,
// /maintenance-windows) and the words the console uses for their kinds, states and metrics, in one place
// so every alerting page says the same thing.

export type AlertState = 'firing' | 'acknowledged' | 'resolved';

export interface Alert {
  id: number;
  rule_id: number | null;
  rule_name: string;
  /** The rule's kind, or `flapping`. */
  kind: string;
  agent_id: string;
  agent_name: string | null;
  hostname: string | null;
  customer_id: number | null;
  label: string;
  state: AlertState;
  suppressed: boolean;
  summary: string;
  value: number | null;
  threshold: number | null;
  since: string;
  fired_at: string;
  acknowledged_at: string | null;
  acknowledged_by: string | null;
  ack_comment: string | null;
  resolved_at: string | null;
  resolved_by: string | null;
  resolve_comment: string | null;
  delivery_error: string | null;
  link: string | null;
}

export interface AlertSummary {
  open: number;
  firing: number;
  acknowledged: number;
}

export const RULE_KINDS = ['agent_offline', 'metric_threshold', 'certificate_expiry', 'task_failed', 'backup_age', 'update_pending'] as const;
export type RuleKind = (typeof RULE_KINDS)[number];

export const KIND_LABELS: Record<string, string> = {
  agent_offline: 'Agent offline',
  metric_threshold: 'Metric threshold',
  certificate_expiry: 'Certificate expiry',
  task_failed: 'Task failed',
  backup_age: 'Backup age',
  update_pending: 'Update pending',
  flapping: 'Flapping',
};

export const METRICS = [
  'cpu_usage',
  'memory_used_percent',
  'memory_used_bytes',
  'memory_total_bytes',
  'uptime_seconds',
  'disk_used_percent',
  'disk_used_bytes',
  'interface_rx_bytes',
  'interface_tx_bytes',
  'gateway_rtt_ms',
  'gateway_loss_percent',
] as const;
export type MetricName = (typeof METRICS)[number];

export const METRIC_LABELS: Record<MetricName, string> = {
  cpu_usage: 'CPU usage (%)',
  memory_used_percent: 'Memory used (%)',
  memory_used_bytes: 'Memory used (bytes)',
  memory_total_bytes: 'Memory total (bytes)',
  uptime_seconds: 'Uptime (seconds)',
  disk_used_percent: 'Disk used (%)',
  disk_used_bytes: 'Disk used (bytes)',
  interface_rx_bytes: 'Interface received (bytes)',
  interface_tx_bytes: 'Interface sent (bytes)',
  gateway_rtt_ms: 'Gateway round trip (ms)',
  gateway_loss_percent: 'Gateway loss (%)',
};

/** What the metric's label names, for the label field's hint. */
export const METRIC_LABEL_HINT: Partial<Record<MetricName, string>> = {
  disk_used_percent: 'mount point, e.g. /',
  disk_used_bytes: 'mount point, e.g. /',
  interface_rx_bytes: 'interface, e.g. igb0',
  interface_tx_bytes: 'interface, e.g. igb0',
  gateway_rtt_ms: 'gateway name, e.g. WAN_DHCP',
  gateway_loss_percent: 'gateway name, e.g. WAN_DHCP',
};

export const OPERATORS = ['>', '>=', '<', '<='] as const;
export type Operator = (typeof OPERATORS)[number];

export interface AlertRule {
  id: number;
  name: string;
  kind: RuleKind;
  enabled: boolean;
  customer_id: number | null;
  agent_id: string | null;
  params: Record<string, unknown>;
  channel_ids: number[];
  reminder_minutes: number | null;
  created_at: string;
  updated_at: string;
}

export const CHANNEL_TYPES = ['email', 'webhook', 'ntfy', 'teams', 'slack', 'discord', 'telegram'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

export const CHANNEL_LABELS: Record<ChannelType, string> = {
  email: 'Email (SMTP)',
  webhook: 'Webhook (JSON)',
  ntfy: 'ntfy',
  teams: 'Microsoft Teams',
  slack: 'Slack',
  discord: 'Discord',
  telegram: 'Telegram',
};

export interface ChannelStatus {
  last_attempt_at: string | null;
  last_delivered_at: string | null;
  last_error: string | null;
  failing_since: string | null;
  /** Notifications not yet delivered. */
  pending: number;
}

export interface Channel {
  id: number;
  name: string;
  type: ChannelType;
  customer_id: number | null;
  enabled: boolean;
  settings: Record<string, unknown>;
  /** Per secret field that is set, its hint (never the secret). */
  secrets: Record<string, string>;
  status: ChannelStatus;
  created_at: string;
  updated_at: string;
}

/** What POST /notification-channels/{id}/test answers: what the receiver said. */
export interface DeliveryOutcome {
  delivered: boolean;
  status_code: number | null;
  error: string | null;
  answer: string | null;
}

export interface MaintenanceWindow {
  id: number;
  name: string;
  customer_id: number | null;
  agent_id: string | null;
  starts_at: string | null;
  ends_at: string | null;
  cron: string | null;
  duration_minutes: number | null;
  active_now: boolean;
  next_start: string | null;
  created_at: string;
  updated_at: string;
}

/** Where a rule or a window applies: every agent, one customer's, or one agent. */
export interface Scope {
  customer_id: number | null;
  agent_id: string | null;
}
