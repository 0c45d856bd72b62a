// Tasks as the API returns them (contract §10), and the few facts about kinds and statuses the pages
// share. The console keeps its own copy of these shapes, like the other pages do (api/types.ts).

export const TASK_KINDS = ['update', 'security_update', 'dist_upgrade', 'reboot', 'exec', 'script', 'backup'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];
/** The kinds a group task may have (the server's GROUP_KINDS). */
export const GROUP_KINDS: readonly TaskKind[] = ['update', 'security_update', 'reboot', 'exec', 'script'];

/**
 * The kinds the form offers: a group's, or one agent's. A configuration backup is a firewall's
 * config.xml, so it is offered for firewalls and for agents that have not registered yet (the server
 * refuses it for the others).
 */
export function offeredKinds(mode: 'agent' | 'group', platform: string | null | undefined): readonly TaskKind[] {
  if (mode === 'group') return GROUP_KINDS;
  return platform === 'freebsd' || platform === null ? TASK_KINDS : TASK_KINDS.filter((k) => k !== 'backup');
}

/** A group task's agents, resolved at every run. */
export interface TaskTarget {
  customer_id?: number;
  platform?: 'freebsd' | 'linux' | 'windows';
  tag?: string;
}

export const TASK_STATUSES = ['scheduled', 'running', 'completed', 'completed_with_warning', 'error', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export interface Task {
  id: number;
  name: string;
  /** Null for a group task, which has a target instead. */
  agent_id: string | null;
  target: TaskTarget | null;
  customer_number: string | null;
  kind: TaskKind;
  params: Record<string, unknown>;
  status: TaskStatus;
  /** Planned time of a one-off task; null for a recurring one. */
  run_at: string | null;
  /** Five-field cron expression in UTC; null for a one-off task. */
  cron: string | null;
  next_run_at: string | null;
  last_run_at: string | null;
  webhook_url: string | null;
  result: Record<string, unknown> | null;
  created_at: string;
}

/**
 * What became of a run's webhook. The server stores whatever its sender returned, and a sender that
 * failed outright leaves only {delivered, error}: every field may be missing.
 */
export interface WebhookDelivery {
  url?: string;
  attempts?: number;
  delivered?: boolean;
  status_code?: number | null;
  error?: string | null;
  last_attempt_at?: string;
}

export interface TaskRun {
  id: number;
  task_id: number;
  status: TaskStatus;
  started_at: string;
  finished_at: string | null;
  /** Whatever the agent answered: untrusted, any shape. */
  result: Record<string, unknown> | null;
  error: string | null;
  /** Null until the delivery has finished (it runs after the run is closed) or when there is no webhook. */
  webhook: WebhookDelivery | null;
}

export const KIND_LABELS: Record<TaskKind, string> = {
  update: 'Update',
  security_update: 'Security update',
  dist_upgrade: 'Release upgrade',
  reboot: 'Reboot',
  exec: 'Run a command',
  script: 'Run a saved script',
  backup: 'Configuration backup',
};

export const STATUS_LABELS: Record<TaskStatus, string> = {
  scheduled: 'scheduled',
  running: 'running',
  completed: 'completed',
  completed_with_warning: 'completed with warning',
  error: 'error',
  cancelled: 'cancelled',
};

/** One line for the params of a task, per kind (the server fills in the defaults, so all are there). */
export function describeParams(task: Pick<Task, 'kind' | 'params'>): string {
  const p = task.params;
  const reboot = p.reboot === true ? 'then reboot' : 'no reboot';
  switch (task.kind) {
    case 'update':
    case 'security_update':
      return reboot;
    case 'dist_upgrade':
      return `to ${String(p.version)}, ${reboot}`;
    case 'reboot':
      return Number(p.delay) > 0 ? `after ${String(p.delay)} s` : 'at once';
    case 'exec':
      return `${String(p.command)} (timeout ${String(p.timeout ?? 60)} s)`;
    case 'script': {
      const values = typeof p.parameters === 'object' && p.parameters !== null ? Object.entries(p.parameters as Record<string, unknown>) : [];
      return `script #${String(p.script_id)}${values.length ? ` with ${values.map(([k, v]) => `${k}=${String(v)}`).join(', ')}` : ''} (timeout ${String(p.timeout ?? 60)} s)`;
    }
    default:
      return '–';
  }
}
