// Metric request and response shapes (contract §4).
import { z } from 'zod';
import { timestampSchema } from '../../http/common-schemas.js';
import { pageQuery, type ListSpec } from '../../http/pagination.js';
import { parseBucket } from './bucket.js';
import { METRIC_NAMES } from './extract-samples.js';

export const metricNameSchema = z.enum(METRIC_NAMES).describe('A metric name; anything else is 400');
const labelSchema = z.string().min(1).max(255);

const range = {
  from: timestampSchema.optional().describe('Start, inclusive. Default: 24 hours before `to`'),
  to: timestampSchema.optional().describe('End, inclusive. Default: now'),
};

/** Raw samples and rates: the most recent `limit` of the range, ascending; the next page is older. */
const newestPages = (tie: string): ListSpec => ({
  defaultLimit: 1000,
  max: 100_000,
  order: `ascending by time (then ${tie}); a page holds the most recent \`limit\` items of the range (before the cursor's position), so its \`rel="next"\` link leads to the older ones before its first item`,
});
export const SAMPLE_LIST = newestPages('metric, label');
export const RATE_LIST = newestPages('interface');

export const rawQuery = z.object({
  metric: metricNameSchema.optional().describe('One metric; default every metric'),
  label: labelSchema.optional().describe('Disk mount, interface or gateway name; "" is not a filter'),
  ...range,
  ...pageQuery(SAMPLE_LIST),
});

/** Bucket text to its width in seconds; a malformed or too narrow bucket is a validation issue. */
function toBucketSeconds(text: string, ctx: z.RefinementCtx<unknown>): number {
  const parsed = parseBucket(text);
  if (!parsed.ok) {
    ctx.addIssue({ code: 'custom', message: parsed.message });
    return z.NEVER;
  }
  return parsed.seconds;
}

const bucketGrammar = 'Interval "N unit" (second, minute, hour, day, week; plural and any case allowed; space or +). At least 10 seconds, at most 10,000 buckets in the range.';

export const bucketSchema = z.string().default('5 minutes').transform(toBucketSeconds).describe(`${bucketGrammar} Default "5 minutes"`);

export const summaryQuery = z.object({
  metric: metricNameSchema,
  label: labelSchema.optional(),
  bucket: bucketSchema,
  ...range,
});

export const ratesQuery = z.object({
  interface: labelSchema.optional().describe('One interface name; default every interface'),
  bucket: z
    .string()
    .optional()
    .transform((text, ctx) => (text === undefined ? undefined : toBucketSeconds(text, ctx)))
    .describe(`${bucketGrammar} When given, one point per bucket and interface: the bits moved in the bucket's steps over the seconds they span (a time-weighted mean rate), stamped with the bucket's start; buckets are aligned as in the summary. Default: one point per step`),
  ...range,
  ...pageQuery(RATE_LIST),
});

export const sampleSchema = z.object({
  time: timestampSchema.describe('Server receive time of the heartbeat'),
  metric: metricNameSchema,
  label: z.string().describe('Disk mount, interface or gateway name; "" for scalar metrics'),
  value: z.number(),
});

export const summaryRowSchema = z.object({
  bucket: timestampSchema.describe('Start of the bucket; buckets are aligned to UTC (weeks start on Monday)'),
  metric: metricNameSchema,
  label: z.string(),
  avg: z.number(),
  min: z.number(),
  max: z.number(),
  count: z.number().int(),
});

export const rateSchema = z.object({
  time: timestampSchema.describe('Time of the later of the two counter samples; with `bucket`, the start of the bucket'),
  interface: z.string(),
  rx_bps: z.number().describe('Receive rate in bits per second since the previous sample'),
  tx_bps: z.number().describe('Transmit rate in bits per second since the previous sample'),
});
