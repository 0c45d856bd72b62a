// The summary's bucket grammar (contract §4) as a pure function: which texts are accepted and how many
// seconds they mean, which are refused (with a message), and how many buckets a range spans.
import { describe, expect, it } from 'vitest';
import { bucketCount, MAX_BUCKET_SECONDS, MAX_BUCKETS, MIN_BUCKET_SECONDS, parseBucket } from '../src/modules/metrics/bucket.js';

describe('parseBucket', () => {
  it.each([
    ['5 minutes', 300],
    ['5+minutes', 300],
    ['5 minute', 300],
    ['1 minute', 60],
    ['1 Minute', 60],
    ['1 hour', 3_600],
    ['3 HOURS', 10_800],
    ['2 Days', 172_800],
    ['1 day', 86_400],
    ['1 WEEK', 604_800],
    ['2 weeks', 1_209_600],
    ['10 seconds', 10],
    ['10 second', 10],
    ['10+SECONDS', 10],
    ['90 seconds', 90],
    ['05 minutes', 300],
    ['3660 days', 3_660 * 86_400],
  ])('accepts "%s" as %i seconds', (text, seconds) => {
    expect(parseBucket(text)).toEqual({ ok: true, seconds });
  });

  it.each([
    '5 fortnights',
    '0 minutes',
    '0 seconds',
    '1 second',
    '9 seconds',
    '1 hour; select 1',
    'hour',
    '-5 minutes',
    '+5 minutes',
    '5',
    '',
    ' 5 minutes',
    '5 minutes ',
    '5  minutes',
    '5minutes',
    '5 mins',
    '5 minutess',
    '1.5 hours',
    '1e3 seconds',
    '5 months',
    '1 year',
    '3661 days',
    '999999999999 weeks',
    '1000000000000 seconds',
    '5\nminutes',
    '5\tminutes',
    '5 minutes\n',
  ])('refuses %j with a message', (text) => {
    const parsed = parseBucket(text);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok === false && parsed.message.length > 0).toBe(true);
  });

  it('puts the minimum at 10 seconds and the maximum at 10 years of 366 days', () => {
    expect(MIN_BUCKET_SECONDS).toBe(10);
    expect(MAX_BUCKET_SECONDS).toBe(10 * 366 * 86_400);
    expect(parseBucket(`${MAX_BUCKET_SECONDS} seconds`)).toEqual({ ok: true, seconds: MAX_BUCKET_SECONDS });
    expect(parseBucket(`${MAX_BUCKET_SECONDS + 1} seconds`).ok).toBe(false);
  });
});

describe('bucketCount', () => {
  const at = (iso: string) => new Date(iso);
  const DAY_FROM = at('2026-11-22T00:00:00Z');

  it.each([
    ['24 hours of 5 minutes', at('2026-11-23T00:00:00Z'), 300, 288],
    ['24 hours and 1 ms of 5 minutes', at('2026-11-23T00:00:00.001Z'), 300, 289],
    ['24 hours of 1 hour', at('2026-11-23T00:00:00Z'), 3_600, 24],
    ['24 hours of 10 seconds', at('2026-11-23T00:00:00Z'), 10, 8_640],
    ['100,000 s of 10 seconds', at('2026-11-23T03:46:40Z'), 10, 10_000],
    ['100,001 s of 10 seconds', at('2026-11-23T03:46:41Z'), 10, 10_001],
    ['a day of 1 week', at('2026-11-23T00:00:00Z'), 604_800, 1],
    ['an empty range', DAY_FROM, 300, 1],
  ])('counts %s', (_case, to, seconds, count) => {
    expect(bucketCount(DAY_FROM, to, seconds)).toBe(count);
  });

  it('holds the limit at 10,000 buckets', () => {
    expect(MAX_BUCKETS).toBe(10_000);
  });
});
