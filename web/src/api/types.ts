// Shapes of the API objects the console reads (contract §2 and the OpenAPI document at /docs).
export type Platform = 'freebsd' | 'linux' | 'windows';
export type AgentStatus = 'online' | 'stale' | 'offline' | 'unknown';

export interface Agent {
  id: string;
  name: string;
  hostname: string;
  platform: Platform | null;
  customer_id: number | null;
  status: AgentStatus;
  last_heartbeat: string | null;
  update_requested: boolean;
  agent_version: string | null;
  connected: boolean;
  created_at: string;
  /** The on-device updater's latest report; null before its first, absent from servers older than it. */
  updater?: UpdaterReport | null;
  /** Older than the newest firmware uploaded for its platform. */
  version_outdated: boolean;
  tags: string[];
  note: string;
  /** Facts of the latest heartbeat; null when it did not say. */
  os_name: string | null;
  os_version: string | null;
  primary_ip: string | null;
  uptime_seconds: number | null;
  disk_used_percent: number | null;
  disk_worst_mount: string | null;
  pending_updates: number | null;
  reboot_required: boolean | null;
}

/** GET /agents/tags: a tag in use and how many agents carry it. */
export interface AgentTag {
  tag: string;
  agent_count: number;
}

/** What the on-device updater last said about an update (POST /agents/{id}/updater-report). */
export interface UpdaterReport {
  /** installing, healthy, rolled_back, rollback_failed or refused; a newer server may add more. */
  state: string;
  version: string | null;
  message: string | null;
  reported_at: string;
}

/** The agent with its latest system data, exactly as the agent sent it (any shape: agents are not trusted). */
export interface AgentDetail extends Agent {
  system: unknown;
}

export interface AgentEvent {
  id: number;
  agent_id: string;
  type: 'online' | 'offline' | 'stale' | 'connected' | 'disconnected';
  created_at: string;
}

export interface Customer {
  id: number;
  number: string;
  name: string;
  created_at: string;
}

/** The API's hostname of a pre-registered agent until it registers (the spec's German placeholder). */
export const PENDING_HOSTNAME = '(ausstehend)';

/** A hostname as the English console shows it: a pre-registered agent's placeholder reads "pending". */
export function hostnameText(hostname: string): string {
  return hostname === PENDING_HOSTNAME ? 'pending' : hostname;
}

export const PLATFORM_LABELS: Record<Platform, string> = { freebsd: 'Firewall', linux: 'Hypervisor', windows: 'Windows' };
export const STATUSES: readonly AgentStatus[] = ['online', 'stale', 'offline', 'unknown'];
