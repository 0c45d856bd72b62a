// GET /agents/{id}/metrics/rates and /metrics/latest (contract §4): bits per second between consecutive
// counter samples per interface (a reset or a missing counter yields no point), the interface filter,
// limit and time buckets (`bucket`, for long ranges); the newest value of every metric and label,
// including a disk that stopped being reported.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';

type Rate = { time: string; interface: string; rx_bps: number; tx_bps: number };
type Sample = { time: string; metric: string; label: string; value: number };
type Json = Record<string, unknown>;

let t: TestApp;
let agentKey: string;
let reader: Record<string, string>;
const clock = new FakeClock('2026-11-22T09:00:00Z');

beforeAll(async () => {
  t = await buildTestApp({ clock });
  const token = await adminToken(t);
  agentKey = (await createKey(t.app, bearer(token), 'agent')).key;
  reader = apiKey((await createKey(t.app, bearer(token), 'read')).key);
});
afterAll(() => t.close());

async function register(): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(agentKey), payload: { hostname: 'rates', platform: 'freebsd' } });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { agent_id: string }).agent_id;
}

async function beatAt(iso: string, id: string, fields: Json): Promise<void> {
  clock.set(iso);
  const payload = JSON.stringify({ agent_id: id, platform: 'freebsd', ...fields });
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: { ...apiKey(agentKey), 'content-type': 'application/json' }, payload });
  expect(res.statusCode, res.body).toBe(200);
}

const get = (id: string, path: string) => t.app.inject({ method: 'GET', url: `/api/v1/agents/${id}/metrics/${path}`, headers: reader });

async function read<T>(id: string, path: string): Promise<T> {
  const res = await get(id, path);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as T;
}

const nic = (name: string, rx?: number, tx?: number) => ({ name, ...(rx === undefined ? {} : { rx_bytes: rx }), ...(tx === undefined ? {} : { tx_bytes: tx }) });
const net = (...interfaces: Json[]) => ({ network: { interfaces } });
const rate = (time: string, iface: string, rx: number, tx: number) => ({ time, interface: iface, rx_bps: expect.closeTo(rx, 6), tx_bps: expect.closeTo(tx, 6) });

describe('GET /metrics/rates', () => {
  let id: string;
  beforeAll(async () => {
    id = await register();
    await beatAt('2026-11-22T10:00:00Z', id, net(nic('igc0', 1_000, 500), nic('wan', 0, 0)));
    // 10 s later: igc0 +1000/+1000 bytes, wan +10000/+5000 bytes.
    await beatAt('2026-11-22T10:00:10Z', id, net(nic('igc0', 2_000, 1_500), nic('wan', 10_000, 5_000)));
    // igc0's receive counter went down (reset): no igc0 point for this step; wan did not move.
    await beatAt('2026-11-22T10:00:30Z', id, net(nic('igc0', 500, 2_500), nic('wan', 10_000, 5_000)));
    // 60 s later: igc0 counts on from the reset value.
    await beatAt('2026-11-22T10:01:30Z', id, net(nic('igc0', 6_500, 3_100), nic('wan', 25_000, 5_000)));
    // igc0 reports only its receive counter: no igc0 point.
    await beatAt('2026-11-22T10:01:40Z', id, net(nic('igc0', 7_000), nic('wan', 25_000, 6_000)));
    clock.set('2026-11-22T12:00:00Z');
  });

  it('computes bits per second per interface between consecutive samples, skipping resets and lone counters', async () => {
    expect(await read<Rate[]>(id, 'rates')).toEqual([
      rate('2026-11-22T10:00:10.000Z', 'igc0', 800, 800),
      rate('2026-11-22T10:00:10.000Z', 'wan', 8_000, 4_000),
      rate('2026-11-22T10:00:30.000Z', 'wan', 0, 0),
      rate('2026-11-22T10:01:30.000Z', 'igc0', 800, 80),
      rate('2026-11-22T10:01:30.000Z', 'wan', 2_000, 0),
      rate('2026-11-22T10:01:40.000Z', 'wan', 0, 800),
    ]);
  });

  it('gives one interface with `interface`, and [] for an unknown one', async () => {
    expect(await read<Rate[]>(id, 'rates?interface=igc0')).toEqual([
      rate('2026-11-22T10:00:10.000Z', 'igc0', 800, 800),
      rate('2026-11-22T10:01:30.000Z', 'igc0', 800, 80),
    ]);
    expect(await read<Rate[]>(id, 'rates?interface=igc9')).toEqual([]);
  });

  it('returns the most recent `limit` points, ascending; refuses a limit below 1', async () => {
    expect(await read<Rate[]>(id, 'rates?interface=wan&limit=2')).toEqual([
      rate('2026-11-22T10:01:30.000Z', 'wan', 2_000, 0),
      rate('2026-11-22T10:01:40.000Z', 'wan', 0, 800),
    ]);
    expect((await read<Rate[]>(id, 'rates?limit=100001')).length).toBe(6);
    expectError(await get(id, 'rates?limit=0'), 400, 'VALIDATION_ERROR');
  });

  it('reads the range, both ends inclusive, and defaults to the last 24 hours', async () => {
    const window = 'from=2026-11-22T10:00:10Z&to=2026-11-22T10:01:30Z&interface=wan';
    expect(await read<Rate[]>(id, `rates?${window}`)).toEqual([
      rate('2026-11-22T10:00:30.000Z', 'wan', 0, 0),
      rate('2026-11-22T10:01:30.000Z', 'wan', 2_000, 0),
    ]);
    clock.set('2026-11-23T10:00:30Z');
    expect((await read<Rate[]>(id, 'rates?interface=wan')).map((r) => r.time)).toEqual(['2026-11-22T10:01:30.000Z', '2026-11-22T10:01:40.000Z']);
    clock.set('2026-11-22T12:00:00Z');
    expectError(await get(id, 'rates?from=2026-11-22T11:00:00Z&to=2026-11-22T10:00:00Z'), 400, 'VALIDATION_ERROR');
  });

  it('returns [] for an agent without interface counters', async () => {
    const other = await register();
    await beatAt('2026-11-22T11:00:00Z', other, { cpu: { usage_percent: 3 } });
    await beatAt('2026-11-22T11:01:00Z', other, { cpu: { usage_percent: 4 } });
    expect(await read<Rate[]>(other, 'rates')).toEqual([]);
  });
});

describe('GET /metrics/rates?bucket', () => {
  let id: string;
  beforeAll(async () => {
    id = await register();
    // lan moves steadily (10 bytes/s received, 20 sent: 80 and 160 bit/s). wan's steps are uneven, so a
    // time-weighted bucket differs from the plain mean of its rates; one of its steps is a reset.
    const lan = (s: number) => nic('lan', s * 10, s * 20);
    await beatAt('2026-11-22T10:00:00Z', id, net(nic('wan', 0, 0), lan(0)));
    await beatAt('2026-11-22T10:00:20Z', id, net(nic('wan', 1_000, 0), lan(20))); // wan 20 s: 8,000 / 0 bits
    await beatAt('2026-11-22T10:00:30Z', id, net(nic('wan', 3_000, 500), lan(30))); // 10 s: 16,000 / 4,000 bits
    await beatAt('2026-11-22T10:01:10Z', id, net(nic('wan', 3_000, 500), lan(70))); // 40 s: nothing moved
    await beatAt('2026-11-22T10:01:30Z', id, net(nic('wan', 2_000, 600), lan(90))); // reset: no wan step
    await beatAt('2026-11-22T10:01:50Z', id, net(nic('wan', 4_000, 1_100), lan(110))); // 20 s: 16,000 / 4,000 bits
    clock.set('2026-11-22T12:00:00Z');
  });

  it('gives one point per bucket and interface at the bucket start: bits moved over seconds spanned', async () => {
    expect(await read<Rate[]>(id, 'rates?bucket=1+minute')).toEqual([
      rate('2026-11-22T10:00:00.000Z', 'lan', 80, 160),
      rate('2026-11-22T10:00:00.000Z', 'wan', 24_000 / 30, 4_000 / 30),
      rate('2026-11-22T10:01:00.000Z', 'lan', 80, 160),
      rate('2026-11-22T10:01:00.000Z', 'wan', 16_000 / 60, 4_000 / 60),
    ]);
    // The reset step's 20 s count for nothing: 40,000 / 8,000 bits over 90 s.
    expect(await read<Rate[]>(id, 'rates?interface=wan&bucket=1%20hour')).toEqual([rate('2026-11-22T10:00:00.000Z', 'wan', 40_000 / 90, 8_000 / 90)]);
  });

  it('keeps the range and the most recent `limit` points', async () => {
    expect(await read<Rate[]>(id, 'rates?bucket=1+minute&limit=2')).toEqual([
      rate('2026-11-22T10:01:00.000Z', 'lan', 80, 160),
      rate('2026-11-22T10:01:00.000Z', 'wan', 16_000 / 60, 4_000 / 60),
    ]);
    expect(await read<Rate[]>(id, 'rates?interface=wan&bucket=30+seconds&from=2026-11-22T10:00:20Z&to=2026-11-22T10:01:50Z')).toEqual([
      rate('2026-11-22T10:00:30.000Z', 'wan', 1_600, 400),
      rate('2026-11-22T10:01:00.000Z', 'wan', 0, 0),
      rate('2026-11-22T10:01:30.000Z', 'wan', 800, 200),
    ]);
  });

  it('refuses a bucket outside the grammar, under 10 seconds, or making more than 10,000 buckets', async () => {
    for (const bucket of ['fortnight', '1+fortnight', '5+seconds', '']) {
      expectError(await get(id, `rates?bucket=${bucket}`), 400, 'VALIDATION_ERROR');
    }
    const res = await get(id, 'rates?bucket=10+seconds&from=2026-11-01T00:00:00Z&to=2026-11-22T12:00:00Z');
    expectError(res, 400, 'VALIDATION_ERROR');
    expect((res.json() as { details: Array<{ path: string }> }).details[0]!.path).toBe('bucket');
  });
});

describe('GET /metrics/latest', () => {
  const disk = (mount: string, used_percent: number) => ({ mount, used_percent });

  it('returns [] before the first sample', async () => {
    expect(await read<Sample[]>(await register(), 'latest')).toEqual([]);
  });

  it('gives the newest value of each metric and label, sorted by metric then label', async () => {
    const id = await register();
    await beatAt('2026-11-22T10:00:00Z', id, { cpu: { usage_percent: 5 }, uptime_seconds: 100, disks: [disk('/', 40), disk('/var/log', 70)] });
    await beatAt('2026-11-22T10:05:00Z', id, { cpu: { usage_percent: 7 }, uptime_seconds: 400, disks: [disk('/', 41), disk('/var/log', 72)] });
    expect(await read<Sample[]>(id, 'latest')).toEqual([
      { time: '2026-11-22T10:05:00.000Z', metric: 'cpu_usage', label: '', value: 7 },
      { time: '2026-11-22T10:05:00.000Z', metric: 'disk_used_percent', label: '/', value: 41 },
      { time: '2026-11-22T10:05:00.000Z', metric: 'disk_used_percent', label: '/var/log', value: 72 },
      { time: '2026-11-22T10:05:00.000Z', metric: 'uptime_seconds', label: '', value: 400 },
    ]);
  });

  it('keeps a disk that disappeared for 24 hours after the newest heartbeat, then drops it', async () => {
    const id = await register();
    await beatAt('2026-11-22T10:00:00Z', id, { cpu: { usage_percent: 5 }, disks: [disk('/', 40), disk('/var/log', 70)] });
    await beatAt('2026-11-22T10:05:00Z', id, { cpu: { usage_percent: 7 }, disks: [disk('/', 41)] });
    const latest = () => read<Sample[]>(id, 'latest');
    expect(await latest()).toEqual([
      { time: '2026-11-22T10:05:00.000Z', metric: 'cpu_usage', label: '', value: 7 },
      { time: '2026-11-22T10:05:00.000Z', metric: 'disk_used_percent', label: '/', value: 41 },
      { time: '2026-11-22T10:00:00.000Z', metric: 'disk_used_percent', label: '/var/log', value: 70 },
    ]);

    await beatAt('2026-11-23T10:00:00Z', id, { cpu: { usage_percent: 9 }, disks: [disk('/', 42)] });
    expect((await latest()).find((s) => s.label === '/var/log')).toEqual({ time: '2026-11-22T10:00:00.000Z', metric: 'disk_used_percent', label: '/var/log', value: 70 });

    await beatAt('2026-11-23T10:00:01Z', id, { cpu: { usage_percent: 11 }, disks: [disk('/', 43)] });
    expect(await latest()).toEqual([
      { time: '2026-11-23T10:00:01.000Z', metric: 'cpu_usage', label: '', value: 11 },
      { time: '2026-11-23T10:00:01.000Z', metric: 'disk_used_percent', label: '/', value: 43 },
    ]);
  });

  it('answers 404 for an unknown agent', async () => {
    expectError(await get('00000000000000000000000000000001', 'latest'), 404, 'NOT_FOUND');
  });
});
