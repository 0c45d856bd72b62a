// Table types of device sessions (migration 0030, issue 59): every device shell and file transfer, and
// since issue 60 every remote desktop, RDP and web-interface tunnel; and each agent's remote-access
// targets (migration 0031).
import type { ColumnType } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** bigint columns come back as strings from pg and numbers from PGlite; written as numbers. */
type BigCount = ColumnType<string | number, number | undefined, number>;

export type DeviceSessionKind = 'shell' | 'download' | 'upload' | 'desktop' | 'rdp' | 'web';

export interface DeviceSessionsTable {
  id: string;
  kind: DeviceSessionKind;
  agent_id: string;
  /** The agent's name when the session started (the agent may be deleted later). */
  agent_name: string;
  customer_id: number | null;
  user_id: number | null;
  /** Who opened it, as the audit log names actors: a username, or an API key's hint. */
  actor: string;
  started_at: Timestamp;
  ended_at: Timestamp | null;
  /** Why it ended: closed, exited, idle, time-limit, agent-gone, client-gone, failed: … */
  end_reason: string | null;
  /** Bytes toward the device (keystrokes, an upload) and from it (output, a download). */
  bytes_in: BigCount;
  bytes_out: BigCount;
  /** The shell's asciicast v2 recording, gzipped, in the blob store; null when not recorded. */
  recording_sha256: string | null;
  recording_bytes: BigCount | null;
}

/** Where an agent's device serves VNC, RDP and its web interface, when not at the defaults. */
export interface AgentRemoteAccessTable {
  agent_id: string;
  vnc_host: string;
  vnc_port: number;
  rdp_port: number;
  /** null: the platform's port from the settings. */
  web_port: number | null;
  updated_at: Timestamp;
}
