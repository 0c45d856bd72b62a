// Table types of checks and policies (migration 0032, issue 61).
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** jsonb written as JSON text, read as the parsed value. */
type Json<T> = ColumnType<T, string, string>;
/** bigint columns come back as strings from pg and numbers from PGlite. */
type BigCount = ColumnType<string | number, number, number>;

export interface CheckPoliciesTable {
  id: Generated<number>;
  name: string;
  /** The name lower-cased: names are unique whatever their case. */
  name_key: string;
  description: string;
  enabled: boolean;
  customer_ids: ColumnType<number[], number[], number[]>;
  /** Lower-cased, as agents' tag_keys. */
  tags: ColumnType<string[], string[], string[]>;
  platforms: ColumnType<string[], string[], string[]>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PolicyChecksTable {
  /** A UUID, kept while the check is edited: its states, history, overrides and perfdata series follow it. */
  id: string;
  policy_id: number;
  position: number;
  name: string;
  kind: string;
  params: Json<Record<string, unknown>>;
  interval_seconds: number;
  timeout_seconds: number;
  enabled: boolean;
}

export interface AgentCheckOverridesTable {
  agent_id: string;
  check_id: string;
  excluded: boolean;
  params: Json<Record<string, unknown>>;
  interval_seconds: number | null;
  updated_at: Timestamp;
}

export interface CheckStatesTable {
  agent_id: string;
  check_id: string;
  /** 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN. */
  state: number;
  output: string;
  perfdata: Json<unknown[]>;
  duration_ms: number;
  last_run_at: Timestamp;
  last_change_at: Timestamp;
}

export interface CheckStateHistoryTable {
  id: Generated<BigCount>;
  agent_id: string;
  check_id: string;
  state: number;
  output: string;
  at: Timestamp;
}

export interface ChecksRevisionTable {
  id: number;
  revision: BigCount;
}
