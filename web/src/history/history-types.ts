// The command history's shapes as the API sends them (GET /history, /agents/{id}/history, /history/{id}).
import { allOf, type ApiBody, type ApiItem } from '../api/api-types';

export type HistoryEntry = ApiItem<'/history'>;
/** One entry with its whole output. */
export type HistoryDetail = ApiBody<'/history/{id}'>;
export type HistorySource = HistoryEntry['source'];
export type HistoryStatus = HistoryEntry['status'];
export const HISTORY_SOURCES = allOf<HistorySource>()(['exec', 'script', 'bulk', 'task']);
export const SOURCE_LABELS: Record<HistorySource, string> = { exec: 'Command', script: 'Script', bulk: 'Bulk action', task: 'Task' };

/** "0.4 s", "12 s", "3 min 5 s": a command's run time at a glance. */
export function formatMs(ms: number | null): string {
  if (ms === null) return '–';
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}
