// The command history's shapes as the API sends them (GET /history, /agents/{id}/history, /history/{id}).

export type HistorySource = 'exec' | 'script' | 'bulk' | 'task';
export const HISTORY_SOURCES: readonly HistorySource[] = ['exec', 'script', 'bulk', 'task'];
export const SOURCE_LABELS: Record<HistorySource, string> = { exec: 'Command', script: 'Script', bulk: 'Bulk action', task: 'Task' };

export type HistoryStatus = 'running' | 'completed' | 'failed' | 'error' | 'lost';

export interface HistoryEntry {
  id: number;
  agent_id: string;
  agent_name: string;
  source: HistorySource;
  actor_type: 'user' | 'api_key' | 'system';
  actor: string;
  script_id: number | null;
  script_name: string | null;
  command: string;
  started_at: string;
  finished_at: string | null;
  duration_ms: number | null;
  status: HistoryStatus;
  exit_code: number | null;
  error: string | null;
  output_bytes: number;
  output_truncated: boolean;
  output_preview: string;
}

export interface HistoryDetail extends HistoryEntry {
  stdout: string | null;
  stderr: string | null;
}

/** "0.4 s", "12 s", "3 min 5 s": a command's run time at a glance. */
export function formatMs(ms: number | null): string {
  if (ms === null) return '–';
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}
