// The time ranges the Metrics tab offers and the bucket each is summarised in. Buckets are chosen so a
// chart holds at most a few hundred points (60 to 288), far under the server's 10,000-bucket limit, and
// only the short ranges refresh: a 60 s refresh moves a 7-day chart by less than a pixel.

export interface TimeRange {
  id: string;
  /** Button text. */
  label: string;
  /** Heading text: "last 24 hours". */
  description: string;
  ms: number;
  /** The server's bucket grammar ("N unit"). */
  bucket: string;
  bucketSeconds: number;
  refreshMs: number | undefined;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const REFRESH_MS = 60_000;

export const RANGES: readonly TimeRange[] = [
  { id: '1h', label: '1 h', description: 'last hour', ms: HOUR_MS, bucket: '1 minute', bucketSeconds: 60, refreshMs: REFRESH_MS },
  { id: '24h', label: '24 h', description: 'last 24 hours', ms: DAY_MS, bucket: '5 minutes', bucketSeconds: 300, refreshMs: REFRESH_MS },
  { id: '7d', label: '7 d', description: 'last 7 days', ms: 7 * DAY_MS, bucket: '1 hour', bucketSeconds: 3_600, refreshMs: undefined },
  { id: '30d', label: '30 d', description: 'last 30 days', ms: 30 * DAY_MS, bucket: '3 hours', bucketSeconds: 10_800, refreshMs: undefined },
  { id: '90d', label: '90 d', description: 'last 90 days', ms: 90 * DAY_MS, bucket: '12 hours', bucketSeconds: 43_200, refreshMs: undefined },
];

export const DEFAULT_RANGE: TimeRange = RANGES[1]!;

/** The range named in the URL, or the default for a missing or unknown one. */
export function rangeById(id: string | null): TimeRange {
  return RANGES.find((r) => r.id === id) ?? DEFAULT_RANGE;
}

/** The window to ask for, ending now (computed per request, so a refresh moves it along). */
export function windowOf(range: TimeRange, now = Date.now()): { from: string; to: string } {
  return { from: new Date(now - range.ms).toISOString(), to: new Date(now).toISOString() };
}
