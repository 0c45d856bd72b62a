// Row types of every table, as Kysely sees them. Keep in step with migrations/.
import type { ColumnType, Generated, GeneratedAlways } from 'kysely';
import type {
  AlertConditionsTable,
  AlertRuleChannelsTable,
  AlertRulesTable,
  AlertsTable,
  MaintenanceWindowsTable,
  NotificationChannelsTable,
  NotificationOutboxTable,
} from './schema-alerting.js';
import type { BlobChunksTable, BlobsTable } from './schema-blobs.js';
import type { PasskeysTable, WebauthnChallengesTable } from './schema-passkeys.js';
import type { AgentPresenceTable, ClusterInstancesTable, ClusterLeasesTable, ClusterRepliesTable } from './schema-cluster.js';
import type { BulkActionResultsTable, BulkActionsTable, CommandHistoryTable, ScriptsTable } from './schema-workflows.js';
import type { SsoIdentitiesTable, SsoLoginsTable, SsoProvidersTable } from './schema-sso.js';

/** A timestamp the database fills in on insert. */
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface SettingsTable {
  key: string;
  value: string;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface UsersTable {
  id: Generated<number>;
  username: string;
  password_hash: string;
  totp_enabled: Generated<boolean>;
  totp_secret: string | null;
  totp_pending_secret: string | null;
  totp_last_step: number | null;
  token_version: Generated<number>;
  created_at: CreatedAt;
  last_login_at: Timestamp | null;
  /** Migration 0022: the keys' ladder; `agent` is for keys only. */
  role: Generated<UserRole>;
  /** False: limited to the customers in user_customers. */
  all_customers: Generated<boolean>;
}

export type UserRole = 'read' | 'write' | 'admin';

export interface UserCustomersTable {
  user_id: number;
  customer_id: number;
}

export interface UserSessionsTable {
  id: string;
  user_id: number;
  /** How the session began: password, totp, passkey, sso. */
  method: string;
  ip: string;
  user_agent: string;
  created_at: Timestamp;
  last_used_at: Timestamp;
  expires_at: Timestamp;
}

export interface CustomersTable {
  id: Generated<number>;
  number: string;
  name: string;
  created_at: CreatedAt;
}

export type Permission = 'agent' | 'read' | 'write' | 'admin';

export interface ApiKeysTable {
  id: Generated<number>;
  name: string;
  key_hash: string;
  key_hint: string;
  permissions: Permission;
  customer_id: number | null;
  created_at: CreatedAt;
  /** Enrollment keys (migration 0016): no use after this time; null: never expires. */
  expires_at: Timestamp | null;
  /** Installs (script or package downloads) the key may make; null: unlimited. */
  max_uses: number | null;
  uses: Generated<number>;
}

export interface AuditLogTable {
  id: Generated<number>;
  time: Timestamp;
  actor_type: 'user' | 'api_key';
  actor: string;
  action: string;
  method: string;
  path: string;
  status_code: number;
  ip: string;
  /** The object changed, named for people ("agent demo-3 (Bäckerei …)"); null when none applies. */
  target: string | null;
  /** Migration 0022: the customer the target belongs to, so callers limited to customers see it. */
  customer_id: number | null;
}

export interface LoginFailuresTable {
  id: Generated<number>;
  username: string;
  failed_at: Timestamp;
}

export interface PendingLoginsTable {
  id: string;
  user_id: number;
  expires_at: Timestamp;
  failed_attempts: Generated<number>;
  used_at: Timestamp | null;
}

export type Platform = 'freebsd' | 'linux' | 'windows';
export type AgentEventType = 'online' | 'offline' | 'stale' | 'connected' | 'disconnected';

/** Facts of the latest heartbeat (src/modules/agents/system-facts.ts, migration 0017); null when it did not say. */
export interface AgentFactColumns {
  os_name: string | null;
  os_version: string | null;
  primary_ip: string | null;
  uptime_seconds: number | null;
  /** The highest used percentage of any disk (0..100, one decimal) and that disk's mount. */
  disk_used_percent: number | null;
  disk_worst_mount: string | null;
  pending_updates: number | null;
  reboot_required: boolean | null;
}

export interface AgentsTable extends AgentFactColumns {
  id: string;
  name: string;
  hostname: string;
  platform: Platform | null;
  customer_id: number | null;
  agent_version: string | null;
  agent_sha256: string | null;
  update_requested: Generated<boolean>;
  last_heartbeat: Timestamp | null;
  last_api_key: Generated<string>;
  last_status: string | null;
  /** The latest heartbeat body exactly as received (text; cast with ::json to query inside). */
  system: string | null;
  created_at: CreatedAt;
  /** The on-device updater's latest report (migration 0011); all null until its first. */
  updater_state: UpdaterState | null;
  updater_version: string | null;
  updater_message: string | null;
  updater_reported_at: Timestamp | null;
  /** When the update flag was last set (migration 0013); null while it is not set. */
  update_requested_at: Timestamp | null;
  /** natural_sort_key(name), made by the database (migration 0017): the list's name order. */
  name_key: GeneratedAlways<string>;
  /** Tags as written, and lower-cased for the `tag` filter (migration 0017). */
  tags: Generated<string[]>;
  tag_keys: Generated<string[]>;
  note: Generated<string>;
}

export type UpdaterState = 'installing' | 'healthy' | 'rolled_back' | 'rollback_failed' | 'refused';

export interface AgentEventsTable {
  id: Generated<number>;
  agent_id: string;
  type: AgentEventType;
  created_at: Timestamp;
}

export interface MetricLayoutsTable {
  id: Generated<number>;
  fingerprint: string;
  metrics: string[];
  labels: string[];
}

/** One heartbeat's metric values, in the order of its layout (the recent, uncompacted form). */
export interface MetricPointsTable {
  agent_id: string;
  time: Timestamp;
  layout: number;
  vals: number[];
}

/** One agent/metric/label/hour of compacted samples. */
export interface MetricHoursTable {
  agent_id: string;
  metric: string;
  label: string;
  hour: Timestamp;
  offsets_ms: number[];
  vals: number[];
  sample_count: number;
  value_sum: number;
  value_min: number;
  value_max: number;
}

/** One distinct configuration of an agent (contract §7). */
export interface ConfigBackupsTable {
  id: Generated<number>;
  agent_id: string;
  /** SHA-256 hex of the content's UTF-8 bytes; unique per agent. */
  hash: string;
  /** Bytes of the content's UTF-8 encoding. */
  size: number;
  content: string;
  created_at: Timestamp;
}

export interface FirmwareTable {
  id: Generated<number>;
  version: string;
  platform: string;
  /** SHA-256 hex of the binary; also the name of its file in the blob store. */
  sha256: string;
  size: number;
  created_at: Timestamp;
  /** Detached Ed25519 signature (base64) of the firmware's signed text, or null when uploaded without. */
  signature: string | null;
}

export interface InstallersTable {
  platform: string;
  sha256: string;
  size: number;
  created_at: Timestamp;
}

/** A customer's installer key (migration 0012): an agent key scoped to it, sealed, for its packages' rmm-agent.json. */
export interface CustomerInstallerKeysTable {
  customer_id: number;
  api_key_id: number;
  sealed_key: string;
  /** When this key became the installer key (a rotation replaces the row's key and time). */
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface TasksTable {
  id: Generated<number>;
  name: string;
  /** One agent; null for a group task (migration 0021), which has a target instead. */
  agent_id: string | null;
  /** A group task's agents, resolved at each run: {customer_id?, platform?, tag?}. */
  target: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  /** The customer a group task belongs to (scope checks); null for single-agent tasks and unscoped groups. */
  scope_customer_id: number | null;
  customer_number: string | null;
  kind: string;
  params: ColumnType<Record<string, unknown>, string, string>;
  status: string;
  run_at: Timestamp | null;
  cron: string | null;
  next_run_at: Timestamp | null;
  last_run_at: Timestamp | null;
  webhook_url: string | null;
  /** Seconds an update run waits for the agent to come back. */
  health_check_timeout: number;
  result: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  created_at: Timestamp;
  /** The process running the task now, and until when its claim holds without renewal. */
  claimed_by: string | null;
  lease_until: Timestamp | null;
}

export interface TaskRunsTable {
  id: Generated<number>;
  task_id: number;
  status: string;
  started_at: Timestamp;
  finished_at: Timestamp | null;
  result: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  error: string | null;
  webhook: ColumnType<Record<string, unknown> | null, string | null, string | null>;
}

export type WauAction = 'allow' | 'block';

/** A winget-autoupdate rule of a customer (contract §3); package ids are unique per customer, ignoring case. */
export interface WauRulesTable {
  id: Generated<number>;
  customer_id: number;
  action: WauAction;
  package_id: string;
  display_name: string;
  created_at: Timestamp;
}

/** When a customer's rules last changed (never going back): what the lists' Last-Modified is made from. */
export interface WauListChangesTable {
  customer_id: number;
  changed_at: Timestamp;
}

/** One installed program of a Windows agent, from its latest heartbeat that carried a different list. */
export interface AgentSoftwareTable {
  agent_id: string;
  name: string;
  publisher: string;
  version: string;
  install_date: string;
}

/** The hash of an agent's stored inventory, so an unchanged heartbeat writes nothing. */
export interface AgentSoftwareStateTable {
  agent_id: string;
  hash: string;
  entry_count: number;
  received_at: Timestamp;
}

/** Facts of an agent's latest system data for the attention list, written with each heartbeat. */
export interface AgentAttentionFactsTable {
  agent_id: string;
  updates_available: boolean | null;
  update_packages: number | null;
  /** [{name, valid_to, in_use}], values as the agent sent them. */
  certificates: ColumnType<unknown[], string, string>;
  /** [{mount, used_percent, used_bytes, total_bytes}], values as the agent sent them. */
  disks: ColumnType<unknown[], string | undefined, string>;
}

export interface Database {
  settings: SettingsTable;
  users: UsersTable;
  user_customers: UserCustomersTable;
  user_sessions: UserSessionsTable;
  customers: CustomersTable;
  api_keys: ApiKeysTable;
  audit_log: AuditLogTable;
  login_failures: LoginFailuresTable;
  pending_logins: PendingLoginsTable;
  agents: AgentsTable;
  agent_events: AgentEventsTable;
  metric_layouts: MetricLayoutsTable;
  metric_points: MetricPointsTable;
  metric_hours: MetricHoursTable;
  config_backups: ConfigBackupsTable;
  firmware: FirmwareTable;
  installers: InstallersTable;
  customer_installer_keys: CustomerInstallerKeysTable;
  tasks: TasksTable;
  task_runs: TaskRunsTable;
  scripts: ScriptsTable;
  command_history: CommandHistoryTable;
  bulk_actions: BulkActionsTable;
  bulk_action_results: BulkActionResultsTable;
  wau_rules: WauRulesTable;
  wau_list_changes: WauListChangesTable;
  agent_software: AgentSoftwareTable;
  agent_software_state: AgentSoftwareStateTable;
  agent_attention_facts: AgentAttentionFactsTable;
  notification_channels: NotificationChannelsTable;
  alert_rules: AlertRulesTable;
  alert_rule_channels: AlertRuleChannelsTable;
  alerts: AlertsTable;
  alert_conditions: AlertConditionsTable;
  maintenance_windows: MaintenanceWindowsTable;
  notification_outbox: NotificationOutboxTable;
  cluster_instances: ClusterInstancesTable;
  agent_presence: AgentPresenceTable;
  cluster_leases: ClusterLeasesTable;
  cluster_replies: ClusterRepliesTable;
  blob_chunks: BlobChunksTable;
  blobs: BlobsTable;
  passkeys: PasskeysTable;
  webauthn_challenges: WebauthnChallengesTable;
  sso_providers: SsoProvidersTable;
  sso_identities: SsoIdentitiesTable;
  sso_logins: SsoLoginsTable;
}

export type {
  AlertConditionsTable,
  AlertRuleChannelsTable,
  AlertRuleKind,
  AlertRulesTable,
  AlertsTable,
  AlertState,
  ChannelType,
  MaintenanceWindowsTable,
  NotificationChannelsTable,
  NotificationEvent,
  NotificationOutboxTable,
} from './schema-alerting.js';
export type { BlobChunksTable, BlobsTable } from './schema-blobs.js';
export type { ChallengePurpose, PasskeysTable, WebauthnChallengesTable } from './schema-passkeys.js';
export type { SsoIdentitiesTable, SsoLoginsTable, SsoMapping, SsoProvidersTable } from './schema-sso.js';
export type { BulkActionResultsTable, BulkActionsTable, BulkResultStatus, CommandHistoryTable, ScriptShell, ScriptsTable } from './schema-workflows.js';
