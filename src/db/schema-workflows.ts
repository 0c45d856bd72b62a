// Table types of the technician workflows (issue 33): saved scripts and the command history (migration
// 0018), bulk actions and their per-agent results (migration 0019).
import type { ColumnType, Generated } from 'kysely';
import type { Platform } from './schema-enums.js';

type Timestamp = ColumnType<Date, Date | string, Date | string>;

export type ScriptShell = 'sh' | 'bash' | 'powershell' | 'cmd';

/** A saved script (migration 0018). */
export interface ScriptsTable {
  id: Generated<number>;
  name: string;
  description: string;
  shell: ScriptShell;
  body: string;
  parameters: ColumnType<Array<{ name: string; default: string; description: string }>, string, string>;
  platforms: ColumnType<Platform[], string, string>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** One exec, ad hoc or scripted (migration 0018); finished_at null while it runs. */
export interface CommandHistoryTable {
  id: Generated<number>;
  agent_id: string;
  source: 'exec' | 'script' | 'bulk' | 'task';
  actor_type: 'user' | 'api_key' | 'system';
  actor: string;
  script_id: number | null;
  script_name: string | null;
  command: string;
  timeout_s: number;
  started_at: Timestamp;
  finished_at: Timestamp | null;
  exit_code: number | null;
  error: string | null;
  /** gzip of JSON {stdout, stderr}, capped together at 256 KiB before compression. */
  output: Buffer | null;
  output_bytes: Generated<number>;
  output_truncated: Generated<boolean>;
  output_preview: Generated<string>;
}

export type BulkResultStatus = 'waiting' | 'running' | 'done' | 'failed' | 'not_connected' | 'cancelled';

/** One action on many agents (migration 0019). */
export interface BulkActionsTable {
  id: Generated<number>;
  action: string;
  params: ColumnType<Record<string, unknown>, string, string>;
  target: ColumnType<Record<string, unknown>, string, string>;
  /** The creator's customer scope: a scoped caller sees only actions made within its own. */
  scope_customer_id: number | null;
  actor_type: 'user' | 'api_key' | 'system';
  actor: string;
  task_id: number | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}

/** One agent's part of a bulk action (migration 0019). */
export interface BulkActionResultsTable {
  id: Generated<number>;
  bulk_id: number;
  agent_id: string;
  agent_name: string;
  status: BulkResultStatus;
  result: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  error: string | null;
  history_id: number | null;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
  claimed_by: string | null;
  lease_until: Timestamp | null;
}
