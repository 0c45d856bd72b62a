// Bulk actions' shapes as the API sends them (POST/GET /bulk-actions, GET /bulk-actions/{id}).
import { allOf, type ApiBody, type ApiItem, type ApiRequest } from '../api/api-types';

export type BulkAction = ApiItem<'/bulk-actions'>;
export type BulkActionWithResults = ApiBody<'/bulk-actions/{id}'>;
export type BulkResult = BulkActionWithResults['results'][number];
/** What a bulk action is aimed at: listed agents, or a filter resolved when it is made. */
export type BulkTarget = ApiRequest<'/bulk-actions', 'post'>['target'];

export type BulkActionKind = BulkAction['action'];
export const BULK_ACTIONS = allOf<BulkActionKind>()(['exec', 'script', 'update_check', 'update', 'reboot', 'request_update']);
export const ACTION_LABELS: Record<BulkActionKind, string> = {
  exec: 'Run a command',
  script: 'Run a script',
  update_check: 'Check for updates',
  update: 'Install updates',
  reboot: 'Reboot',
  request_update: 'Request an agent update',
};

export type ResultStatus = BulkResult['status'];
export const RESULT_STATUSES = allOf<ResultStatus>()(['done', 'failed', 'running', 'waiting', 'not_connected', 'cancelled']);
export const RESULT_LABELS: Record<ResultStatus, string> = {
  waiting: 'waiting for agent',
  running: 'running',
  done: 'done',
  failed: 'failed',
  not_connected: 'not connected',
  cancelled: 'cancelled',
};

