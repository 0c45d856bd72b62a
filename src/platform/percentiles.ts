// Median and 99th percentile of durations, for the figures the fleet simulator and the benchmarks print.

/** Median and 99th percentile (nearest rank) of `ms`, in any order; NaN for an empty list. */
export function percentiles(ms: readonly number[]): { p50: number; p99: number } {
  if (ms.length === 0) return { p50: Number.NaN, p99: Number.NaN };
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { p50: at(0.5), p99: at(0.99) };
}
