// The one result table every benchmark contributes rows to: a figure, its baseline measured in the same
// run, and the ratio between them (the number that compares across machines).

export interface BenchRow {
  benchmark: string;
  backend: string;
  /** What `rate` counts, e.g. "heartbeats/s"; the column is named after it when all rows agree. */
  unit: string;
  clients: number;
  rate: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  baselineRate: number;
  /** Server event-loop utilisation during the window, when measured. */
  serverElu?: number;
  /** Anything the reader must know about the row (skips, failures). */
  note?: string;
}

const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : '–');

export function formatTable(rows: readonly BenchRow[]): string {
  const units = new Set(rows.map((r) => r.unit));
  const rateHeader = units.size === 1 ? [...units][0]! : 'rate/s';
  const header = ['benchmark', 'backend', 'clients', rateHeader, 'p50 ms', 'p99 ms', 'errors', 'baseline req/s', 'ratio', 'server ELU'];
  const body = rows.map((r) => [
    r.benchmark,
    r.backend,
    String(r.clients),
    fixed(r.rate, 0),
    fixed(r.p50Ms, 1),
    fixed(r.p99Ms, 1),
    String(r.errors),
    fixed(r.baselineRate, 0),
    fixed(r.rate / r.baselineRate, 2),
    r.serverElu === undefined ? '–' : fixed(r.serverElu, 2),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => cells[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  const notes = rows.filter((r) => r.note).map((r) => `  ${r.benchmark} / ${r.backend}: ${r.note}`);
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line), ...(notes.length ? ['', ...notes] : [])].join('\n');
}
