// Compaction of metric samples (issue 6): raw, summary, rates and latest answer the same before and after
// samples move from metric_points into metric_hours, compaction is idempotent, a late sample merges into
// its already compacted hour, agents' samples never mix, and deleting an agent deletes its compacted rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricsMaintenance } from '../src/modules/metrics/maintenance.js';
import { FakeClock } from '../src/platform/clock.js';
import { createLogger } from '../src/platform/logger.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';

const T0 = Date.parse('2026-03-10T09:58:30.250Z');
const HEARTBEATS = 265; // about 4.5 hours per agent, until ~14:27
const COMPACT_BEFORE = new Date('2026-03-10T12:00:00Z');
const LONG_AGO = new Date('2000-01-01T00:00:00Z');
const WIDE = { from: '2026-03-10T09:00:00Z', to: '2026-03-10T15:00:00Z' };
const MID = { from: '2026-03-10T10:17:13.500Z', to: '2026-03-10T13:41:07.250Z' };
const END = new Date('2026-03-10T14:40:00Z');

/** Irregular receive times with milliseconds: 61 s apart plus jitter; agent B 333 ms after agent A. */
const timeOf = (i: number, k: number) => T0 + i * 61_000 + ((i * 7919) % 1000) + k * 333;

/** Varying values: fractional, negative, big counters (with one reset), and a gateway B has only every other time. */
function heartbeat(agentId: string, i: number, k: number) {
  return {
    agent_id: agentId,
    platform: 'linux',
    hostname: `host-${k}`,
    cpu: { usage_percent: ((i * 37 + k * 11) % 1000) / 10 + 0.125 },
    memory: { used_bytes: 12_345_678_901_234 + i * 4093 * (k + 1), total_bytes: 17_179_869_184_000 },
    uptime_seconds: k === 0 ? 1000 + i * 61 : (i % 100) * 61,
    disks: [
      { mount: '/', used_bytes: 21_474_836_480 + (i % 13) * 1_000_000 * (k + 1), used_percent: 4.4 + i / 1000 + k },
      { mount: '/var', used_bytes: 1000 * i, used_percent: -0.5 + (i % 5) * 0.3 },
    ],
    network: {
      interfaces: [
        { name: 'eth0', rx_bytes: i < 150 ? 12_345_678_901_234 + i * 1_000_003 * (k + 1) : i * 7, tx_bytes: 9_682_865_142_822 + i * i * 13 },
        { name: 'wg0', rx_bytes: i * 1500.5, tx_bytes: i * 2.25 + k },
      ],
    },
    gateways: [
      { name: 'WAN', rtt_ms: 3.14159 * ((i % 17) + 1) - 20 + k, loss_percent: (i % 4) * 25 },
      ...(k === 0 || i % 2 === 0 ? [{ name: 'LTE', rtt_ms: i % 9 === 0 ? -1 : 55.5 + (i % 3), loss_percent: 0.1 * (i % 7) }] : []),
    ],
  };
}

type Sample = { time: string; metric: string; label: string; value: number };
type SummaryRow = { bucket: string; metric: string; label: string; avg: number; min: number; max: number; count: number };
type Answers = Record<string, unknown>;

const clock = new FakeClock(new Date(T0));
let t: TestApp;
let token: string;
let maintenance: MetricsMaintenance;
const agents: Array<{ id: string; key: string }> = [];

async function send(agent: { id: string; key: string }, body: object): Promise<void> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/agent/heartbeat',
    headers: { ...apiKey(agent.key), 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  expect(res.statusCode, res.body).toBe(200);
}

async function get<T>(url: string): Promise<T> {
  const res = await t.app.inject({ method: 'GET', url, headers: bearer(token) });
  expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
  return res.json() as T;
}

const q = (params: Record<string, string>) => new URLSearchParams(params).toString();
const BUCKETS = ['1 hour', '5 minutes', '7 minutes', '90 minutes', '1 day'];
const SUMMARY_METRICS: Array<Record<string, string>> = [
  { metric: 'cpu_usage' },
  { metric: 'disk_used_percent' },
  { metric: 'interface_rx_bytes' },
  { metric: 'gateway_rtt_ms', label: 'LTE' },
];

/** Every query of the metrics API this file compares, by URL. */
function urls(id: string, cutLimit: number): string[] {
  const base = `/api/v1/agents/${id}/metrics`;
  const raw = [
    `${base}?${q({ ...WIDE, limit: '100000' })}`,
    `${base}?${q({ ...MID, limit: '100000' })}`,
    `${base}?${q({ ...WIDE, limit: String(cutLimit) })}`,
    `${base}?${q({ ...WIDE, metric: 'disk_used_bytes', limit: '100000' })}`,
    `${base}?${q({ ...WIDE, metric: 'gateway_rtt_ms', label: 'LTE', limit: '100000' })}`,
    `${base}?${q({ ...MID, label: 'eth0', limit: '100000' })}`,
    `${base}?limit=100000`,
  ];
  const summary = [WIDE, MID].flatMap((range) =>
    BUCKETS.flatMap((bucket) => SUMMARY_METRICS.map((m) => `${base}/summary?${q({ ...range, ...m, bucket })}`)),
  );
  const rates = [`${base}/rates?${q(WIDE)}`, `${base}/rates?${q({ ...MID, interface: 'eth0' })}`, `${base}/rates?${q({ ...WIDE, limit: '100' })}`];
  return [...raw, ...summary, ...rates, `${base}/latest`];
}

/** A raw `limit` whose oldest sample lies in the middle of a heartbeat at ~11:29, inside a compacted hour. */
let cutLimit = 0;

async function capture(id: string): Promise<Answers> {
  const answers: Answers = {};
  for (const url of urls(id, cutLimit)) answers[url] = await get(url);
  return answers;
}

/** Equal answers: exact, except the average of a summary row (summed in another order). */
function expectSameAnswers(after: Answers, before: Answers): void {
  expect(Object.keys(after)).toEqual(Object.keys(before));
  for (const [url, want] of Object.entries(before)) {
    if (!url.includes('/summary?')) {
      expect(after[url], url).toEqual(want);
      continue;
    }
    const got = after[url] as SummaryRow[];
    const rows = want as SummaryRow[];
    expect(got.map(({ avg: _a, ...rest }) => rest), url).toEqual(rows.map(({ avg: _a, ...rest }) => rest));
    rows.forEach((row, n) => {
      const scale = Math.max(Math.abs(row.min), Math.abs(row.max), Number.MIN_VALUE);
      expect(Math.abs(got[n]!.avg - row.avg) / scale, `${url} ${row.bucket} ${row.label}`).toBeLessThanOrEqual(1e-9);
    });
  }
}

const rawAll = (answers: Answers, id: string) => answers[urls(id, cutLimit)[0]!] as Sample[];

async function tableCounts(id: string) {
  const points = await t.db.db.selectFrom('metric_points').select((e) => e.fn.countAll<number>().as('n')).where('agent_id', '=', id).executeTakeFirstOrThrow();
  const hours = await t.db.db
    .selectFrom('metric_hours')
    .select((e) => [e.fn.countAll<number>().as('n'), e.fn.coalesce(e.fn.sum<number>('sample_count'), e.lit(0)).as('samples')])
    .where('agent_id', '=', id)
    .executeTakeFirstOrThrow();
  return { points: Number(points.n), hours: Number(hours.n), hourSamples: Number(hours.samples) };
}

const before: Answers[] = [];
/** Heartbeats per agent received before COMPACT_BEFORE. */
const moved = [0, 1].map((k) => Array.from({ length: HEARTBEATS }, (_, i) => timeOf(i, k)).filter((ms) => ms < COMPACT_BEFORE.getTime()).length);

beforeAll(async () => {
  t = await buildTestApp({ clock });
  token = await adminToken(t);
  maintenance = new MetricsMaintenance(t.db.db, clock, createLogger({ level: 'silent' }), { retentionDays: 90, compressAfterDays: 7 });
  for (const [k, number] of ['60001', '60002'].entries()) {
    const customer = await createCustomer(t.app, token, number);
    const key = (await createKey(t.app, bearer(token), 'agent', customer.id)).key;
    const reg = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(key), payload: { hostname: `host-${k}`, platform: 'linux' } });
    expect(reg.statusCode, reg.body).toBe(200);
    agents.push({ id: (reg.json() as { agent_id: string }).agent_id, key });
  }
  for (let i = 0; i < HEARTBEATS; i++) {
    for (const [k, agent] of agents.entries()) {
      clock.set(new Date(timeOf(i, k)));
      await send(agent, heartbeat(agent.id, i, k));
    }
  }
  clock.set(END);
});
afterAll(() => t.close());

describe('compacting part of the samples', () => {
  it('captures non-trivial answers from the recent form', async () => {
    const all = await get<Sample[]>(`/api/v1/agents/${agents[0]!.id}/metrics?${q({ ...WIDE, limit: '100000' })}`);
    expect(all.length).toBe(HEARTBEATS * 17);
    const firstAfterHalfPast = all.findIndex((s) => s.time >= '2026-03-10T11:30:00.000Z');
    cutLimit = all.length - firstAfterHalfPast + 5;
    for (const agent of agents) before.push(await capture(agent.id));
    for (const answers of before) for (const [url, answer] of Object.entries(answers)) expect((answer as unknown[]).length, url).toBeGreaterThan(0);
    const cut = before[0]![urls(agents[0]!.id, cutLimit)[2]!] as Sample[];
    expect(cut.length).toBe(cutLimit);
    expect(cut[0]!.time.slice(0, 13)).toBe('2026-03-10T11');
    expect([cut[4]!.time, cut[5]!.time]).toEqual([cut[0]!.time, all[firstAfterHalfPast]!.time]); // cut inside a heartbeat
    expect(rawAll(before[1]!, agents[1]!.id).length).toBe(17 * Math.ceil(HEARTBEATS / 2) + 15 * Math.floor(HEARTBEATS / 2));
    expect(rawAll(before[1]!, agents[1]!.id)).not.toEqual(rawAll(before[0]!, agents[0]!.id));
  });

  it('moves exactly the heartbeats before the cut into one row per agent, metric, label and hour', async () => {
    const report = await maintenance.compactAndExpire(COMPACT_BEFORE, LONG_AGO);
    expect(report).toEqual({ compactedRows: moved[0]! + moved[1]!, deletedSamples: 0 });
    for (const [k, agent] of agents.entries()) {
      const old = rawAll(before[k]!, agent.id).filter((s) => s.time < COMPACT_BEFORE.toISOString());
      const hourKeys = new Set(old.map((s) => `${s.metric}|${s.label}|${s.time.slice(0, 13)}`));
      expect(hourKeys.size).toBe(17 * 3); // hours 09, 10 and 11; B's second gateway is in each of them
      expect(await tableCounts(agent.id)).toEqual({ points: HEARTBEATS - moved[k]!, hours: hourKeys.size, hourSamples: old.length });
    }
  });

  it('answers every raw, summary, rates and latest query as before', async () => {
    for (const [k, agent] of agents.entries()) expectSameAnswers(await capture(agent.id), before[k]!);
  });

  it('is idempotent: compacting again moves nothing and changes no answer', async () => {
    const counts = await Promise.all(agents.map((a) => tableCounts(a.id)));
    expect(await maintenance.compactAndExpire(COMPACT_BEFORE, LONG_AGO)).toEqual({ compactedRows: 0, deletedSamples: 0 });
    expect(await Promise.all(agents.map((a) => tableCounts(a.id)))).toEqual(counts);
    for (const [k, agent] of agents.entries()) expectSameAnswers(await capture(agent.id), before[k]!);
  });
});

describe('a late sample in an already compacted hour', () => {
  const LATE = '2026-03-10T10:30:00.777Z';
  const hourRow = (id: string, metric: string, label: string) =>
    t.db.db
      .selectFrom('metric_hours')
      .selectAll()
      .where('agent_id', '=', id)
      .where('metric', '=', metric)
      .where('label', '=', label)
      .where('hour', '=', new Date('2026-03-10T10:00:00Z'))
      .executeTakeFirstOrThrow();

  it('is answered at once, and merged into its hour in time order by the next compaction', async () => {
    const a = agents[0]!;
    const cpuBefore = await hourRow(a.id, 'cpu_usage', '');
    const wanBefore = await hourRow(a.id, 'gateway_rtt_ms', 'WAN');
    const late = heartbeat(a.id, 40, 0);
    late.cpu.usage_percent = 999.5;
    late.gateways[0]!.rtt_ms = -77.25;
    clock.set(LATE);
    await send(a, late);
    clock.set(END);

    const withLate = await capture(a.id);
    const raw = rawAll(withLate, a.id);
    expect(raw.length).toBe(rawAll(before[0]!, a.id).length + 17);
    expect(raw.filter((s) => s.time === LATE && s.metric === 'cpu_usage')).toEqual([{ time: LATE, metric: 'cpu_usage', label: '', value: 999.5 }]);
    const hourly = withLate[`/api/v1/agents/${a.id}/metrics/summary?${q({ ...WIDE, metric: 'cpu_usage', bucket: '1 hour' })}`] as SummaryRow[];
    expect(hourly.find((r) => r.bucket === '2026-03-10T10:00:00.000Z')).toMatchObject({ count: cpuBefore.sample_count + 1, max: 999.5, min: cpuBefore.value_min });

    expect(await maintenance.compactAndExpire(COMPACT_BEFORE, LONG_AGO)).toEqual({ compactedRows: 1, deletedSamples: 0 });
    const cpu = await hourRow(a.id, 'cpu_usage', '');
    const offset = Date.parse(LATE) - Date.parse('2026-03-10T10:00:00Z');
    expect(cpu.offsets_ms).toEqual([...cpuBefore.offsets_ms, offset].sort((x, y) => x - y));
    expect(cpu.vals[cpu.offsets_ms.indexOf(offset)]).toBe(999.5);
    expect(cpu).toMatchObject({ sample_count: cpuBefore.sample_count + 1, value_min: cpuBefore.value_min, value_max: 999.5 });
    expect(cpu.value_sum).toBeCloseTo(cpuBefore.value_sum + 999.5, 6);
    const wan = await hourRow(a.id, 'gateway_rtt_ms', 'WAN');
    expect(wan).toMatchObject({ sample_count: wanBefore.sample_count + 1, value_min: -77.25, value_max: wanBefore.value_max });
    expect((await tableCounts(a.id)).points).toBe(HEARTBEATS - moved[0]!);

    expectSameAnswers(await capture(a.id), withLate);
    expectSameAnswers(await capture(agents[1]!.id), before[1]!); // agent B untouched by A's late sample
  });
});

describe('everything compacted, then agents deleted', () => {
  it('answers the same when all samples are compacted, latest included', async () => {
    const current = await Promise.all(agents.map((a) => capture(a.id)));
    const report = await maintenance.compactAndExpire(new Date('2026-03-11T00:00:00Z'), LONG_AGO);
    expect(report).toEqual({ compactedRows: 2 * HEARTBEATS - moved[0]! - moved[1]!, deletedSamples: 0 });
    for (const [k, agent] of agents.entries()) {
      expect((await tableCounts(agent.id)).points).toBe(0);
      expectSameAnswers(await capture(agent.id), current[k]!);
    }
  });

  it('deletes the compacted rows of a deleted agent only', async () => {
    const [a, b] = [agents[0]!, agents[1]!];
    const keptB = await tableCounts(b.id);
    expect(keptB.hours).toBe(17 * 6); // hours 09 to 14
    const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/agents/${a.id}`, headers: bearer(token) });
    expect(res.statusCode, res.body).toBe(200);
    expect(await tableCounts(a.id)).toEqual({ points: 0, hours: 0, hourSamples: 0 });
    expect(await tableCounts(b.id)).toEqual(keptB);
    expect(rawAll(await capture(b.id), b.id)).toEqual(rawAll(before[1]!, b.id));
  });
});
