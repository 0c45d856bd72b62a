// Small statistics helpers shared by the benchmarks.

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
