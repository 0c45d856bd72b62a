// Tasks as the API returns them (contract §10), and the few facts about kinds and statuses the pages
// share.
import { allOf, type ApiItem, type ApiRequest } from '../api/api-types';

export type Task = ApiItem<'/tasks'>;
/**
 * A run's `result` is whatever the agent answered (untrusted, any shape); its `webhook` is null until the
 * delivery has finished (it runs after the run is closed) or when there is no webhook.
 */
export type TaskRun = ApiItem<'/tasks/{id}/runs'>;
export type TaskKind = Task['kind'];
export const TASK_KINDS = allOf<TaskKind>()(['update', 'security_update', 'dist_upgrade', 'reboot', 'exec', 'script', 'backup']);
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
export type TaskTarget = NonNullable<ApiRequest<'/tasks', 'post'>['target']>;

export type TaskStatus = Task['status'];
export const TASK_STATUSES = allOf<TaskStatus>()(['scheduled', 'running', 'completed', 'completed_with_warning', 'error', 'cancelled']);

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
