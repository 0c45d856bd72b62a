// Row types of cluster mode's tables (migrations/0014_cluster.ts).
import type { ColumnType } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface ClusterInstancesTable {
  id: string;
  advertise_address: string;
  started_at: Timestamp;
  last_seen_at: Timestamp;
}

export interface AgentPresenceTable {
  agent_id: string;
  instance_id: string;
  connected_at: Timestamp;
}

export interface ClusterLeasesTable {
  name: string;
  holder: string;
  token: number;
  expires_at: Timestamp;
}

export interface ClusterRepliesTable {
  id: string;
  body: string;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}
