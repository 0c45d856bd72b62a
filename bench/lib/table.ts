// The one result table every benchmark contributes rows to: a figure, its baseline measured in the same
// run, and the ratio between them (the number that compares across machines). Some figures are better
// high (heartbeats/s), some low (ms, bytes); each row says which.
import { pathToFileURL } from 'node:url';
import { chooseBackends } from './backends.js';

export interface BenchRow {
  benchmark: string;
  backend: string;
  /** The load or data size the figure was measured at, e.g. "32 clients" or "90 days". */
  setting: string;
  figure: number;
  /** What `figure` counts, e.g. "heartbeats/s", "ms", "bytes/sample". */
  unit: string;
  baseline: number;
  /** What the baseline is, e.g. "bare parse req/s". */
  baselineLabel: string;
  better: 'higher' | 'lower';
  p50Ms?: number;
  p99Ms?: number;
  errors?: number;
  /**
   * figure ÷ baseline unless given: interleaved benchmarks give the median of their per-pair ratios,
   * which one slow minute of a shared machine moves less than a ratio of medians.
   */
  ratio?: number;
  /** The target for the ratio (or, with `of: 'figure'`, the figure), when there is one: the table marks the row ✔ or ✘. */
  target?: Target;
  /** Anything the reader must know about the row (skips, failures, targets). */
  note?: string;
}

export interface Target {
  op: '≥' | '≤' | '<';
  value: number;
  /** What the target applies to: the ratio (default), or the figure itself (e.g. "p99 < 50 ms"). */
  of?: 'ratio' | 'figure';
}

export const ratioOf = (r: BenchRow): number => r.ratio ?? r.figure / r.baseline;

/** Whether a value meets a target; a value that was not measured (a failed start, no answers) misses it. */
export function meets(value: number, target: Target): boolean {
  if (!Number.isFinite(value)) return false;
  return target.op === '≥' ? value >= target.value : target.op === '≤' ? value <= target.value : value < target.value;
}

/** "≤ 2.5 ✔" for a ratio target, "figure < 50 ✘" for one on the figure itself. */
export function verdict(ratio: number, target: Target, figure = Number.NaN): string {
  const onFigure = target.of === 'figure';
  const met = meets(onFigure ? figure : ratio, target);
  return `${onFigure ? 'figure ' : ''}${target.op} ${target.value} ${met ? '✔' : '✘'}`;
}

const fixed = (n: number | undefined, digits: number) => (n !== undefined && Number.isFinite(n) ? n.toFixed(digits) : '–');
const figure = (n: number) => (Math.abs(n) >= 100 ? fixed(n, 0) : fixed(n, Math.abs(n) >= 10 ? 1 : 2));

export function formatTable(rows: readonly BenchRow[]): string {
  // The target column only when a row has one: the benchmarks that still say theirs in the note show none.
  const targets = rows.some((r) => r.target);
  const header = ['benchmark', 'backend', 'setting', 'figure', 'unit', 'baseline', 'baseline is', 'ratio', ...(targets ? ['target'] : []), 'better', 'p50 ms', 'p99 ms', 'errors'];
  const body = rows.map((r) => [
    r.benchmark,
    r.backend,
    r.setting,
    figure(r.figure),
    r.unit,
    figure(r.baseline),
    r.baselineLabel,
    fixed(ratioOf(r), 2),
    ...(targets ? [r.target ? verdict(ratioOf(r), r.target, r.figure) : '–'] : []),
    r.better,
    fixed(r.p50Ms, 1),
    fixed(r.p99Ms, 1),
    r.errors === undefined ? '–' : String(r.errors),
  ]);
  const numeric = new Set(targets ? [3, 5, 7, 10, 11, 12] : [3, 5, 7, 9, 10, 11]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => cells[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (numeric.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  const notes = rows.filter((r) => r.note).map((r) => `  ${r.benchmark} / ${r.backend} / ${r.setting}: ${r.note}`);
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line), ...(notes.length ? ['', ...notes] : [])].join('\n');
}

/** Runs a benchmark's `run` and prints its table when its file is started directly (`npx tsx bench/x.ts`). */
export function runWhenMain(moduleUrl: string, run: () => Promise<BenchRow[]>): void {
  if (moduleUrl !== pathToFileURL(process.argv[1] ?? '').href) return;
  run().then(
    async (rows) => console.log(`Database: ${(await chooseBackends(process.env)).reason}\n\n${formatTable(rows)}`),
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
