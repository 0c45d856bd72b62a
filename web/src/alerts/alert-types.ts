// Shapes of the alerting API's objects (issue 31: /alerts, /alert-rules, /notification-channels,
// /maintenance-windows) and the words the console uses for their kinds, states and metrics, in one place
// so every alerting page says the same thing.
import { allOf, type ApiBody, type ApiItem, type ApiQuery } from '../api/api-types';

export type Alert = ApiItem<'/alerts'>;
export type AlertState = Alert['state'];
export type AlertSummary = ApiBody<'/alerts/summary'>;
export type AlertRule = ApiItem<'/alert-rules'>;
export type Channel = ApiItem<'/notification-channels'>;
export type ChannelStatus = Channel['status'];
/** What POST /notification-channels/{id}/test answers: what the receiver said. */
export type DeliveryOutcome = ApiBody<'/notification-channels/{id}/test', 'post'>;
export type MaintenanceWindow = ApiItem<'/maintenance-windows'>;

export type RuleKind = AlertRule['kind'];
export const RULE_KINDS = allOf<RuleKind>()(['agent_offline', 'metric_threshold', 'certificate_expiry', 'task_failed', 'backup_age', 'update_pending', 'check_state']);

export const KIND_LABELS: Record<string, string> = {
  agent_offline: 'Agent offline',
  metric_threshold: 'Metric threshold',
  certificate_expiry: 'Certificate expiry',
  task_failed: 'Task failed',
  backup_age: 'Backup age',
  update_pending: 'Update pending',
  check_state: 'Check state',
  flapping: 'Flapping',
};

/** The metrics of heartbeats, which a metric_threshold rule watches (checks' perfdata, check_perf, is not judged by rules). */
export type MetricName = Exclude<NonNullable<ApiQuery<'/agents/{id}/metrics'>['metric']>, 'check_perf'>;
export const METRICS = allOf<MetricName>()([
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
]);

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

export type ChannelType = Channel['type'];
export const CHANNEL_TYPES = allOf<ChannelType>()(['email', 'webhook', 'ntfy', 'teams', 'slack', 'discord', 'telegram']);

export const CHANNEL_LABELS: Record<ChannelType, string> = {
  email: 'Email (SMTP)',
  webhook: 'Webhook (JSON)',
  ntfy: 'ntfy',
  teams: 'Microsoft Teams',
  slack: 'Slack',
  discord: 'Discord',
  telegram: 'Telegram',
};

/** Where a rule or a window applies: every agent, one customer's, or one agent. */
export type Scope = Pick<AlertRule, 'customer_id' | 'agent_id'>;
