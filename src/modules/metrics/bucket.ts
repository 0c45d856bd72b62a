// The summary's bucket grammar (contract §4): `N unit`, unit one of second, minute, hour, day, week
// (plural allowed, any case), number and unit separated by one space or `+` (a `+` in a URL query
// already arrives as a space; a percent-encoded one arrives as `+`). The text is only ever turned into
// a number of seconds here; it never reaches SQL.

const UNIT_SECONDS: Record<string, number> = {
  second: 1,
  minute: 60,
  hour: 3_600,
  day: 86_400,
  week: 604_800,
};

export const MIN_BUCKET_SECONDS = 10;
/** Wider buckets are of no use for samples kept 90 days, and keep bucket arithmetic far from overflow. */
export const MAX_BUCKET_SECONDS = 10 * 366 * 86_400;
export const MAX_BUCKETS = 10_000;

const GRAMMAR = /^(\d{1,12})[ +](second|minute|hour|day|week)s?$/i;

export type BucketParse = { ok: true; seconds: number } | { ok: false; message: string };

export function parseBucket(text: string): BucketParse {
  const match = GRAMMAR.exec(text);
  if (!match) {
    return { ok: false, message: 'must be "N unit" with unit second, minute, hour, day or week, e.g. "5 minutes"' };
  }
  const seconds = Number(match[1]) * UNIT_SECONDS[match[2]!.toLowerCase()]!;
  if (seconds < MIN_BUCKET_SECONDS) return { ok: false, message: `must be at least ${MIN_BUCKET_SECONDS} seconds` };
  if (seconds > MAX_BUCKET_SECONDS) return { ok: false, message: 'must be at most 10 years' };
  return { ok: true, seconds };
}

/** How many bucket widths the range spans (24 hours of 5 minutes: 288). */
export function bucketCount(from: Date, to: Date, seconds: number): number {
  return Math.max(1, Math.ceil((to.getTime() - from.getTime()) / (seconds * 1000)));
}
