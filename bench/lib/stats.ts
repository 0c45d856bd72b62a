// Small statistics helpers shared by the benchmarks.
import { performance } from 'node:perf_hooks';
import { percentiles } from '../../src/platform/percentiles.js';

/** The q-quantile (0..1) of ascending-sorted samples, nearest-rank; NaN when there are none. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/** The median (the mean of the middle two for an even count); NaN when there are none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The median of the per-pair ratios a[i] ÷ b[i] of interleaved rounds (A B A B …): each pair shares its
 * minute of the machine, so the ratio of a pair moves less than either side does between pairs.
 */
export function medianRatio(a: readonly number[], b: readonly number[]): number {
  return median(a.slice(0, b.length).map((x, i) => x / b[i]!));
}

export interface TimedSide {
  p50: number;
  p99: number;
  durations: number[];
  /** What the side's last run returned (rows, buckets): a check that both sides did the same work. */
  result: number;
}

/**
 * Times two queries in alternation (a, b, a, b …, after 5 untimed runs of each), so a slow second of the
 * shared machine hits both sides alike; `ratio` is the median of the pairs' a ÷ b.
 */
export async function timeInterleaved(runs: number, a: () => Promise<number>, b: () => Promise<number>): Promise<{ a: TimedSide; b: TimedSide; ratio: number }> {
  const sides = [a, b].map((query) => ({ query, result: 0, durations: [] as number[] }));
  for (let i = 0; i < 5; i++) for (const side of sides) side.result = await side.query();
  for (let i = 0; i < runs; i++) {
    for (const side of sides) {
      const started = performance.now();
      side.result = await side.query();
      side.durations.push(performance.now() - started);
    }
  }
  const [timedA, timedB] = sides.map((side) => ({ ...percentiles(side.durations), durations: side.durations, result: side.result })) as [TimedSide, TimedSide];
  return { a: timedA, b: timedB, ratio: medianRatio(timedA.durations, timedB.durations) };
}
