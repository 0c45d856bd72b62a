// Bulk action results as CSV (RFC 4180): quoted where needed, CRLF line ends, and cells a spreadsheet
// would run as a formula (= + - @, tab, carriage return first) prefixed with a quote, since agent output
// is untrusted text.
import type { BulkResultRow } from './bulk.repo.js';

const HEADER = ['agent', 'agent_id', 'status', 'exit_code', 'error', 'output', 'started_at', 'finished_at'];

export function csvCell(value: string | number | null): string {
  let text = value === null ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function firstLine(result: Record<string, unknown> | null): string {
  const stdout = typeof result?.stdout === 'string' ? result.stdout.trim() : '';
  const stderr = typeof result?.stderr === 'string' ? result.stderr.trim() : '';
  return (stdout || stderr).split(/\r?\n/, 1)[0] ?? '';
}

export function resultsCsv(results: readonly BulkResultRow[]): string {
  const rows = results.map((r) => [
    r.agent_name,
    r.agent_id,
    r.status,
    typeof r.result?.exit_code === 'number' ? r.result.exit_code : null,
    r.error,
    firstLine(r.result),
    r.started_at?.toISOString() ?? null,
    r.finished_at?.toISOString() ?? null,
  ]);
  return [HEADER, ...rows].map((row) => row.map(csvCell).join(',')).join('\r\n') + '\r\n';
}
