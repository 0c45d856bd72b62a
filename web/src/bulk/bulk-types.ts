// Bulk actions' shapes as the API sends them (POST/GET /bulk-actions, GET /bulk-actions/{id}).

export type BulkActionKind = 'exec' | 'script' | 'update_check' | 'update' | 'reboot' | 'request_update';
export const BULK_ACTIONS: readonly BulkActionKind[] = ['exec', 'script', 'update_check', 'update', 'reboot', 'request_update'];
export const ACTION_LABELS: Record<BulkActionKind, string> = {
  exec: 'Run a command',
  script: 'Run a script',
  update_check: 'Check for updates',
  update: 'Install updates',
  reboot: 'Reboot',
  request_update: 'Request an agent update',
};

export type ResultStatus = 'waiting' | 'running' | 'done' | 'failed' | 'not_connected' | 'cancelled';
export const RESULT_STATUSES: readonly ResultStatus[] = ['done', 'failed', 'running', 'waiting', 'not_connected', 'cancelled'];
export const RESULT_LABELS: Record<ResultStatus, string> = {
  waiting: 'waiting for agent',
  running: 'running',
  done: 'done',
  failed: 'failed',
  not_connected: 'not connected',
  cancelled: 'cancelled',
};

/** What a bulk action is aimed at: listed agents, or a filter resolved when it is made. */
export interface BulkTarget {
  agent_ids?: string[];
  all?: true;
  customer_id?: number;
  platform?: string;
  status?: string;
  q?: string;
  tag?: string;
}

export interface BulkAction {
  id: number;
  action: BulkActionKind;
  params: Record<string, unknown>;
  target: Record<string, unknown>;
  actor: string;
  task_id: number | null;
  created_at: string;
  expires_at: string;
  counts: Record<ResultStatus, number>;
  finished: boolean;
}

export interface BulkResult {
  agent_id: string;
  agent_name: string;
  status: ResultStatus;
  /** exec and scripts: exit_code, stdout and stderr (4 KiB each); other actions: the agent's answer. Untrusted. */
  result: Record<string, unknown> | null;
  error: string | null;
  history_id: number | null;
  started_at: string | null;
  finished_at: string | null;
}

export interface BulkActionWithResults extends BulkAction {
  results: BulkResult[];
}
