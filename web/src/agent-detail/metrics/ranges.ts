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

/**
 * The range a page opens on: the shortest that holds everything since `since` (when the agent was
 * created; it has no samples from before), and at most the usual 24 hours. An agent with 10 minutes of
 * data opened on 24 hours showed a sliver at the right edge (issue 33).
 */
export function defaultRangeFor(since: string | undefined, now = Date.now()): TimeRange {
  const age = since ? now - Date.parse(since) : Number.NaN;
  return RANGES.find((r) => r.ms >= age && r.ms <= DEFAULT_RANGE.ms) ?? DEFAULT_RANGE;
}

/** The range named in the URL, or `fallback` for a missing or unknown one. */
export function rangeById(id: string | null, fallback: TimeRange = DEFAULT_RANGE): TimeRange {
  return RANGES.find((r) => r.id === id) ?? fallback;
}

/** The window to ask for, ending now (computed per request, so a refresh moves it along). */
export function windowOf(range: TimeRange, now = Date.now()): { from: string; to: string } {
  return { from: new Date(now - range.ms).toISOString(), to: new Date(now).toISOString() };
}
