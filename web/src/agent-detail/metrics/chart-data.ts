// Turns bucketed points into the column form uPlot draws: one shared time axis and a value column per
// series. uPlot spans `undefined` and breaks the line at `null`, which lets a chart tell the two kinds
// of missing point apart: a bucket that happened to get no heartbeat (timing jitter) is bridged, while
// a longer silence (agent offline) shows as a gap instead of a misleading straight line.

export interface Point {
  /** Seconds since the epoch (uPlot's time unit). */
  t: number;
  label: string;
  value: number;
}

export interface ChartSeries {
  label: string;
  values: (number | null | undefined)[];
}

export interface ChartData {
  x: number[];
  series: ChartSeries[];
}

/** Heartbeats come at least every couple of minutes, so 5 minutes without a bucket is a real outage. */
const MIN_GAP_SECONDS = 300;

export function gapSecondsFor(bucketSeconds: number): number {
  return Math.max(2.5 * bucketSeconds, MIN_GAP_SECONDS);
}

const byName = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/**
 * One series per label (sorted naturally, "eth2" before "eth10"); `order`, when given, fixes the
 * order of known labels instead (received before transmitted).
 */
export function buildChartData(points: readonly Point[], bucketSeconds: number, order?: readonly string[]): ChartData {
  const byLabel = new Map<string, Map<number, number>>();
  for (const p of points) {
    let values = byLabel.get(p.label);
    if (!values) byLabel.set(p.label, (values = new Map()));
    values.set(p.t, p.value);
  }
  const labels = [...byLabel.keys()].sort((a, b) => {
    const rank = (label: string) => (order?.includes(label) ? order.indexOf(label) : Number.MAX_SAFE_INTEGER);
    return rank(a) - rank(b) || byName.compare(a, b);
  });

  const gap = gapSecondsFor(bucketSeconds);
  const present = [...new Set(points.map((p) => p.t))].sort((a, b) => a - b);
  // A time with no series at all inside each long silence, so every series has a slot to break at.
  const x: number[] = [];
  present.forEach((t, i) => {
    const previous = present[i - 1];
    if (previous !== undefined && t - previous > gap) x.push(previous + bucketSeconds);
    x.push(t);
  });

  const series = labels.map((label) => {
    const known = byLabel.get(label)!;
    const values: (number | null | undefined)[] = x.map((t) => known.get(t));
    let last: number | undefined;
    values.forEach((value, i) => {
      if (value === undefined) return;
      if (last !== undefined && x[i]! - x[last]! > gap) values.fill(null, last + 1, i);
      last = i;
    });
    return { label, values };
  });
  return { x, series };
}

/** True when no series has a single value to draw. */
export function isEmpty(data: ChartData): boolean {
  return !data.series.some((s) => s.values.some((v) => typeof v === 'number'));
}
