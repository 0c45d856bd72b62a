// GET /agents/{id}/metrics/summary (contract §4): avg/min/max/count per bucket and label from known
// samples, buckets aligned to UTC (days at midnight, weeks on Monday), the bucket grammar as it arrives
// in URLs, the 10 s minimum and the 10,000-bucket limit, filters, the default range and the errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';

type Row = { bucket: string; metric: string; label: string; avg: number; min: number; max: number; count: number };
type Json = Record<string, unknown>;

let t: TestApp;
let agentKey: string;
let reader: Record<string, string>;
const clock = new FakeClock('2026-11-22T09:00:00Z');

/** Agent with cpu samples 10..60 and two disks, between 10:00 and 11:00 on Sunday 2026-11-22. */
let minutes: string;
/** Agent with cpu samples 1, 2, 4, 8, 16 from Saturday 2026-11-21 to Tuesday 2026-11-24. */
let days: string;

async function register(): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(agentKey), payload: { hostname: 'summary', platform: 'linux' } });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { agent_id: string }).agent_id;
}

async function beatAt(iso: string, id: string, fields: Json): Promise<void> {
  clock.set(iso);
  const payload = JSON.stringify({ agent_id: id, platform: 'linux', ...fields });
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: { ...apiKey(agentKey), 'content-type': 'application/json' }, payload });
  expect(res.statusCode, res.body).toBe(200);
}

const disks = (root: number, data: number) => [
  { mount: '/', used_percent: root, used_bytes: root * 100 },
  { mount: '/data', used_percent: data, used_bytes: data * 100 },
];

beforeAll(async () => {
  t = await buildTestApp({ clock });
  const token = await adminToken(t);
  agentKey = (await createKey(t.app, bearer(token), 'agent')).key;
  reader = apiKey((await createKey(t.app, bearer(token), 'read')).key);

  minutes = await register();
  await beatAt('2026-11-22T10:00:00Z', minutes, { cpu: { usage_percent: 10 }, disks: disks(40, 70) });
  await beatAt('2026-11-22T10:02:00Z', minutes, { cpu: { usage_percent: 20 }, disks: disks(42, 71) });
  await beatAt('2026-11-22T10:04:59Z', minutes, { cpu: { usage_percent: 30 }, disks: disks(44, 75) });
  await beatAt('2026-11-22T10:05:00Z', minutes, { cpu: { usage_percent: 40 } });
  await beatAt('2026-11-22T10:59:59Z', minutes, { cpu: { usage_percent: 50 } });
  await beatAt('2026-11-22T11:00:00Z', minutes, { cpu: { usage_percent: 60 } });

  days = await register();
  await beatAt('2026-11-21T23:59:59Z', days, { cpu: { usage_percent: 1 } }); // Saturday
  await beatAt('2026-11-22T00:00:00Z', days, { cpu: { usage_percent: 2 } }); // Sunday
  await beatAt('2026-11-22T13:00:00Z', days, { cpu: { usage_percent: 4 } });
  await beatAt('2026-11-23T00:00:00Z', days, { cpu: { usage_percent: 8 } }); // Monday
  await beatAt('2026-11-24T06:00:00Z', days, { cpu: { usage_percent: 16 } }); // Tuesday
  clock.set('2026-11-22T12:00:00Z');
});
afterAll(() => t.close());

/** GET with the query text exactly as given (so `+` and `%2B` reach the server as written). */
const get = (id: string, query: string) => t.app.inject({ method: 'GET', url: `/api/v1/agents/${id}/metrics/summary?${query}`, headers: reader });

async function summary(id: string, query: string): Promise<Row[]> {
  const res = await get(id, query);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Row[];
}

const MORNING = 'from=2026-11-22T10:00:00Z&to=2026-11-22T12:00:00Z';
const WEEK = 'from=2026-11-16T00:00:00Z&to=2026-11-29T00:00:00Z';
const cpu = (bucket: string, avg: number, min: number, max: number, count: number) => ({ bucket, metric: 'cpu_usage', label: '', avg, min, max, count });
const enc = encodeURIComponent;

const FIVE_MINUTES = [
  cpu('2026-11-22T10:00:00.000Z', 20, 10, 30, 3),
  cpu('2026-11-22T10:05:00.000Z', 40, 40, 40, 1),
  cpu('2026-11-22T10:55:00.000Z', 50, 50, 50, 1),
  cpu('2026-11-22T11:00:00.000Z', 60, 60, 60, 1),
];

describe('aggregates per bucket', () => {
  it.each([
    ['5 minutes with a space', `bucket=${enc('5 minutes')}`],
    ['5+minutes as written in a URL', 'bucket=5+minutes'],
    ['a percent-encoded +', 'bucket=5%2Bminutes'],
    ['the default bucket', ''],
  ])('summarises 5-minute buckets given %s', async (_case, bucket) => {
    expect(await summary(minutes, `metric=cpu_usage&${MORNING}&${bucket}`)).toEqual(FIVE_MINUTES);
  });

  it('summarises hours on the hour', async () => {
    expect(await summary(minutes, `metric=cpu_usage&bucket=1+hour&${MORNING}`)).toEqual([
      cpu('2026-11-22T10:00:00.000Z', 30, 10, 50, 5),
      cpu('2026-11-22T11:00:00.000Z', 60, 60, 60, 1),
    ]);
  });

  it('uses the last 24 hours when from and to are absent', async () => {
    clock.set('2026-11-23T10:04:59Z'); // the 10:00:00 and 10:02:00 samples are now older than 24 h
    expect(await summary(minutes, 'metric=cpu_usage&bucket=1%20hour')).toEqual([
      cpu('2026-11-22T10:00:00.000Z', 40, 30, 50, 3),
      cpu('2026-11-22T11:00:00.000Z', 60, 60, 60, 1),
    ]);
    clock.set('2026-11-22T12:00:00Z');
  });

  it('starts day buckets at midnight UTC', async () => {
    expect(await summary(days, `metric=cpu_usage&bucket=1+day&${WEEK}`)).toEqual([
      cpu('2026-11-21T00:00:00.000Z', 1, 1, 1, 1),
      cpu('2026-11-22T00:00:00.000Z', 3, 2, 4, 2),
      cpu('2026-11-23T00:00:00.000Z', 8, 8, 8, 1),
      cpu('2026-11-24T00:00:00.000Z', 16, 16, 16, 1),
    ]);
  });

  it('counts multi-day buckets from the origin Monday 2000-01-03, in any case', async () => {
    // 2026-11-22 is 9820 days after 2000-01-03, so two-day buckets start on the 20th, 22nd and 24th.
    expect(await summary(days, `metric=cpu_usage&bucket=2+Days&${WEEK}`)).toEqual([
      cpu('2026-11-20T00:00:00.000Z', 1, 1, 1, 1),
      cpu('2026-11-22T00:00:00.000Z', 14 / 3, 2, 8, 3),
      cpu('2026-11-24T00:00:00.000Z', 16, 16, 16, 1),
    ]);
  });

  it('starts week buckets on Monday', async () => {
    const rows = await summary(days, `metric=cpu_usage&bucket=1%20WEEK&${WEEK}`);
    expect(rows).toEqual([cpu('2026-11-16T00:00:00.000Z', 7 / 3, 1, 4, 3), cpu('2026-11-23T00:00:00.000Z', 12, 8, 16, 2)]);
    expect(rows.map((r) => new Date(r.bucket).getUTCDay())).toEqual([1, 1]);
  });

  it('lists a row per label, and only the asked label with `label`', async () => {
    const disk = (bucket: string, label: string, avg: number, min: number, max: number, count: number) => ({ bucket, metric: 'disk_used_percent', label, avg, min, max, count });
    expect(await summary(minutes, `metric=disk_used_percent&bucket=1+hour&${MORNING}`)).toEqual([
      disk('2026-11-22T10:00:00.000Z', '/', 42, 40, 44, 3),
      disk('2026-11-22T10:00:00.000Z', '/data', 72, 70, 75, 3),
    ]);
    expect(await summary(minutes, `metric=disk_used_percent&label=%2Fdata&bucket=1+minute&${MORNING}`)).toEqual([
      disk('2026-11-22T10:00:00.000Z', '/data', 70, 70, 70, 1),
      disk('2026-11-22T10:02:00.000Z', '/data', 71, 71, 71, 1),
      disk('2026-11-22T10:04:00.000Z', '/data', 75, 75, 75, 1),
    ]);
    expect(await summary(minutes, `metric=disk_used_percent&label=%2Fnone&${MORNING}`)).toEqual([]);
  });

  it('returns [] for a range without samples and for an agent without samples', async () => {
    expect(await summary(minutes, 'metric=cpu_usage&from=2026-11-20T00:00:00Z&to=2026-11-21T00:00:00Z')).toEqual([]);
    expect(await summary(minutes, `metric=gateway_rtt_ms&${MORNING}`)).toEqual([]);
    expect(await summary(await register(), 'metric=cpu_usage')).toEqual([]);
  });

  it('takes from and to as inclusive', async () => {
    expect(await summary(minutes, 'metric=cpu_usage&bucket=1+hour&from=2026-11-22T10:02:00Z&to=2026-11-22T10:59:59Z')).toEqual([
      cpu('2026-11-22T10:00:00.000Z', 35, 20, 50, 4),
    ]);
  });
});

describe('refused requests', () => {
  it.each(['5 fortnights', '0 minutes', '1 second', '9 seconds', '1 hour; select 1', 'hour', '-5 minutes', '5', '', '5 minutes '])(
    'refuses bucket "%s" with 400 VALIDATION_ERROR',
    async (bucket) => {
      const body = expectError(await get(minutes, `metric=cpu_usage&bucket=${enc(bucket)}`), 400, 'VALIDATION_ERROR');
      expect(body.details).toEqual([expect.objectContaining({ path: 'bucket' })]);
    },
  );

  it('accepts 10 seconds over the default day (8,640 buckets) and exactly 10,000 buckets, refuses 10,001 and more', async () => {
    expect(await summary(minutes, 'metric=cpu_usage&bucket=10+seconds')).toEqual(expect.any(Array));
    // 100,000 s in 10 s buckets: 10,000.
    expect((await summary(minutes, 'metric=cpu_usage&bucket=10+seconds&from=2026-11-22T00:00:00Z&to=2026-11-23T03:46:40Z')).length).toBe(6);
    expectError(await get(minutes, 'metric=cpu_usage&bucket=10+seconds&from=2026-11-22T00:00:00Z&to=2026-11-23T03:46:41Z'), 400, 'VALIDATION_ERROR');
    expectError(await get(minutes, 'metric=cpu_usage&bucket=10+seconds&from=2026-11-21T00:00:00Z&to=2026-11-23T00:00:00Z'), 400, 'VALIDATION_ERROR');
    expectError(await get(minutes, 'metric=cpu_usage&bucket=1+minute&from=2016-01-01T00:00:00Z&to=2026-01-01T00:00:00Z'), 400, 'VALIDATION_ERROR');
  });

  it('requires a known metric', async () => {
    const missing = expectError(await get(minutes, MORNING), 400, 'VALIDATION_ERROR');
    expect(missing.details).toEqual([expect.objectContaining({ path: 'metric' })]);
    expectError(await get(minutes, `metric=cpu&${MORNING}`), 400, 'VALIDATION_ERROR');
  });

  it('refuses from after to, and timestamps that are not RFC 3339', async () => {
    expectError(await get(minutes, 'metric=cpu_usage&from=2026-11-22T11:00:00Z&to=2026-11-22T10:00:00Z'), 400, 'VALIDATION_ERROR');
    expectError(await get(minutes, 'metric=cpu_usage&to=22.11.2026'), 400, 'VALIDATION_ERROR');
  });

  it('answers 404 for an unknown agent', async () => {
    expectError(await get('fedcba9876543210fedcba9876543210', 'metric=cpu_usage'), 404, 'NOT_FOUND');
  });
});
