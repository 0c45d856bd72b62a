// Metrics maintenance (issue 6): retention deletes exactly the samples older than the limit in both
// storage forms, runOnce() compacts and expires as of the clock with the configured days, the server
// runs it at start and then hourly on its clock until closed, and invalid day settings stop start-up.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildServerApp } from '../src/apps/server/build-app.js';
import { ConfigError, loadConfig } from '../src/config/env.js';
import { MetricsMaintenance } from '../src/modules/metrics/maintenance.js';
import { FakeClock } from '../src/platform/clock.js';
import { createLogger } from '../src/platform/logger.js';
import { BACKGROUND_LOOPS, buildTestApp, testConfig, testSecrets, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const SAMPLES = 5; // per heartbeat: cpu_usage, uptime_seconds, disk_used_percent '/', gateway_rtt_ms and _loss_percent 'WAN'
const silent = createLogger({ level: 'silent' });

interface Seeded {
  t: TestApp;
  /** A read key: API keys outlive the days the clock moves here (an access token would expire). */
  readKey: string;
  /** Receive times (ms) of each agent's heartbeats. */
  agents: Array<{ id: string; times: number[] }>;
}

/** An app with `count` agents sending heartbeats from `start`, `stepMs` apart (+ jitter), until before `end`. */
async function seed(clock: FakeClock, env: Record<string, string>, count: number, start: number, end: number, stepMs: number): Promise<Seeded> {
  const t = await buildTestApp({ clock, env });
  const token = await adminToken(t);
  const key = (await createKey(t.app, bearer(token), 'agent')).key;
  const readKey = (await createKey(t.app, bearer(token), 'read')).key;
  const agents: Seeded['agents'] = [];
  for (let k = 0; k < count; k++) {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(key), payload: { hostname: `m${k}`, platform: 'linux' } });
    agents.push({ id: (res.json() as { agent_id: string }).agent_id, times: [] });
  }
  for (let i = 0, time = start; time < end; i++, time = start + i * stepMs + ((i * 7919) % 1000)) {
    for (const [k, agent] of agents.entries()) {
      clock.set(new Date(time + k * 211));
      const body = { agent_id: agent.id, platform: 'linux', cpu: { usage_percent: (i % 100) + 0.5 }, uptime_seconds: i * 61, disks: [{ mount: '/', used_percent: i / 7 }], gateways: [{ name: 'WAN', rtt_ms: -i, loss_percent: 12345678901234 }] };
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: { ...apiKey(key), 'content-type': 'application/json' }, payload: JSON.stringify(body) });
      expect(res.statusCode, res.body).toBe(200);
      agent.times.push(time + k * 211);
    }
  }
  return { t, readKey, agents };
}

/** Receive times of the agent's samples as the raw API returns them (every sample ever kept). */
async function sampleTimes(s: Seeded, id: string): Promise<number[]> {
  const url = `/api/v1/agents/${id}/metrics?from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00Z&limit=100000`;
  const res = await s.t.app.inject({ method: 'GET', url, headers: apiKey(s.readKey) });
  expect(res.statusCode, res.body).toBe(200);
  const samples = res.json() as Array<{ time: string }>;
  const times = [...new Set(samples.map((x) => Date.parse(x.time)))];
  expect(samples.length).toBe(times.length * SAMPLES);
  return times;
}

/** Where the agent's samples are stored: heartbeat rows by time, compacted samples by hour. */
async function stored(s: Seeded, id: string) {
  const points = await s.t.db.db.selectFrom('metric_points').select('time').where('agent_id', '=', id).orderBy('time').execute();
  const hours = await s.t.db.db.selectFrom('metric_hours').select(['hour', 'sample_count']).where('agent_id', '=', id).execute();
  return {
    points: points.map((p) => new Date(p.time).getTime()),
    hours: [...new Set(hours.map((h) => new Date(h.hour).getTime()))].sort((a, b) => a - b),
    hourSamples: hours.reduce((n, h) => n + h.sample_count, 0),
  };
}

/** The agent keeps exactly the samples from `keepFrom`; those before `compactBefore` are compacted. */
async function expectKept(s: Seeded, agent: Seeded['agents'][number], keepFrom: number, compactBefore: number) {
  const kept = agent.times.filter((x) => x >= keepFrom);
  expect(await sampleTimes(s, agent.id)).toEqual(kept);
  const compacted = kept.filter((x) => x < compactBefore);
  const where = await stored(s, agent.id);
  expect(where.points).toEqual(kept.filter((x) => x >= compactBefore));
  expect(where.hourSamples).toBe(compacted.length * SAMPLES);
  expect(where.hours).toEqual([...new Set(compacted.map((x) => Math.floor(x / HOUR) * HOUR))]);
}

const count = (times: number[], from: number, to: number) => times.filter((x) => x >= from && x < to).length;

describe('retention with a given cutoff', () => {
  const H0 = Date.parse('2026-04-01T00:00:00Z');
  const clock = new FakeClock(new Date(H0));
  let s: Seeded;
  let maintenance: MetricsMaintenance;
  beforeAll(async () => {
    s = await seed(clock, {}, 2, H0 + 5 * 60_000, H0 + 6 * HOUR, 7 * 60_000 + 13_457);
    maintenance = new MetricsMaintenance(s.t.db.db, clock, silent, { retentionDays: 90, compressAfterDays: 7 });
  });
  afterAll(() => s.t.close());
  const all = (from: number, to: number) => s.agents.reduce((n, a) => n + count(a.times, from, to), 0);
  const FIRST_CUT = H0 + HOUR + 20 * 60_000 + 500;

  it('deletes recent-form samples older than the cutoff to the millisecond, and compacts the rest', async () => {
    const cutoff = FIRST_CUT;
    expect(all(H0 + HOUR, cutoff)).toBeGreaterThan(0);
    const report = await maintenance.compactAndExpire(new Date(H0 + 3 * HOUR), new Date(cutoff));
    expect(report).toEqual({ deletedSamples: all(0, cutoff) * SAMPLES, compactedRows: all(cutoff, H0 + 3 * HOUR) });
    for (const agent of s.agents) await expectKept(s, agent, cutoff, H0 + 3 * HOUR);
  });

  it('deletes compacted hours that ended by the cutoff, and keeps an hour that ends after it whole', async () => {
    const cutoff = H0 + 2 * HOUR + 30 * 60_000;
    const report = await maintenance.compactAndExpire(new Date(H0 + 3 * HOUR), new Date(cutoff));
    expect(report).toEqual({ deletedSamples: all(FIRST_CUT, H0 + 2 * HOUR) * SAMPLES, compactedRows: 0 });
    for (const agent of s.agents) {
      expect(count(agent.times, H0 + 2 * HOUR, cutoff)).toBeGreaterThan(0); // older than the limit, kept with their hour
      await expectKept(s, agent, H0 + 2 * HOUR, H0 + 3 * HOUR);
    }
  });

  it('removes both forms when the cutoff passes them, keeping every newer sample', async () => {
    const cutoff = H0 + 4 * HOUR + 10 * 60_000;
    const report = await maintenance.compactAndExpire(new Date(H0 + 3 * HOUR), new Date(cutoff));
    expect(report).toEqual({ deletedSamples: all(H0 + 2 * HOUR, cutoff) * SAMPLES, compactedRows: 0 });
    for (const agent of s.agents) await expectKept(s, agent, cutoff, H0 + 3 * HOUR);
  });
});

// Three days of heartbeats every ~17 minutes; retention 2 days, compaction after 1 day.
const NOW = Date.parse('2026-05-04T12:34:56.789Z');
const ENV = { METRICS_RETENTION_DAYS: '2', METRICS_COMPRESS_AFTER_DAYS: '1', MONITOR_INTERVAL_SECONDS: '999999' };
const seedDays = (clock: FakeClock) => seed(clock, ENV, 1, NOW - 3 * DAY + 120_000, NOW, 17 * 60_000 + 13_457);
const FIRST_COMPACT_BEFORE = Date.parse('2026-05-03T12:00:00Z'); // whole hours: not 12:34:56.789
const FIRST_CUTOFF = NOW - 2 * DAY;

describe('runOnce', () => {
  const clock = new FakeClock(new Date(NOW - 3 * DAY));
  let s: Seeded;
  let maintenance: MetricsMaintenance;
  beforeAll(async () => {
    s = await seedDays(clock);
    clock.set(new Date(NOW));
    const config = await testConfig(ENV);
    maintenance = new MetricsMaintenance(s.t.db.db, clock, silent, { retentionDays: config.metricsRetentionDays, compressAfterDays: config.metricsCompressAfterDays });
  });
  afterAll(() => s.t.close());

  it('compacts whole hours older than the compaction age and deletes what is older than the retention, as of the clock', async () => {
    const times = s.agents[0]!.times;
    expect(count(times, FIRST_COMPACT_BEFORE, NOW - DAY)).toBeGreaterThan(0); // older than a day, but its hour is not over
    expect(await maintenance.runOnce()).toEqual({
      mode: 'compaction',
      compactedRows: count(times, FIRST_CUTOFF, FIRST_COMPACT_BEFORE),
      deletedSamples: count(times, 0, FIRST_CUTOFF) * SAMPLES,
    });
    await expectKept(s, s.agents[0]!, FIRST_CUTOFF, FIRST_COMPACT_BEFORE);
    expect(await maintenance.runOnce()).toEqual({ mode: 'compaction', compactedRows: 0, deletedSamples: 0 });
  });

  it('an hour later compacts one more hour and deletes the compacted hour that has expired', async () => {
    const times = s.agents[0]!.times;
    clock.set(new Date(NOW + HOUR));
    expect(await maintenance.runOnce()).toEqual({
      mode: 'compaction',
      compactedRows: count(times, FIRST_COMPACT_BEFORE, FIRST_COMPACT_BEFORE + HOUR),
      deletedSamples: count(times, FIRST_CUTOFF, Date.parse('2026-05-02T13:00:00Z')) * SAMPLES,
    });
    await expectKept(s, s.agents[0]!, Date.parse('2026-05-02T13:00:00Z'), FIRST_COMPACT_BEFORE + HOUR);
  });
});

describe('the running server', () => {
  it('runs maintenance at start and then every hour on its clock, with the configured days, until closed', async () => {
    const clock = new FakeClock(new Date(NOW - 3 * DAY));
    const s = await seedDays(clock);
    clock.set(new Date(NOW));
    const agent = s.agents[0]!;
    const server = await buildServerApp({ config: await testConfig(ENV), db: s.t.db, logger: silent, secrets: testSecrets(), clock, bcryptRounds: 4, backgroundJobs: true });
    try {
      await server.ready();
      // Started: the first pass runs at once, then every loop sleeps.
      await vi.waitFor(async () => expect((await stored(s, agent.id)).hourSamples).toBeGreaterThan(0));
      await vi.waitFor(() => expect(clock.pendingSleepers).toBe(BACKGROUND_LOOPS), { timeout: 10_000 });
      await expectKept(s, agent, FIRST_CUTOFF, FIRST_COMPACT_BEFORE);

      await clock.advance(HOUR - 60_000); // not yet an hour: the maintenance did not wake, nothing changed
      // (The task scheduler wakes every minute on the way; wait until it sleeps again.)
      await vi.waitFor(() => expect(clock.pendingSleepers).toBe(BACKGROUND_LOOPS), { timeout: 10_000 });
      await expectKept(s, agent, FIRST_CUTOFF, FIRST_COMPACT_BEFORE);

      await clock.advance(60_000);
      await vi.waitFor(async () => expect((await stored(s, agent.id)).points[0]).toBeGreaterThanOrEqual(FIRST_COMPACT_BEFORE + HOUR));
      await vi.waitFor(() => expect(clock.pendingSleepers).toBe(BACKGROUND_LOOPS), { timeout: 10_000 });
      await expectKept(s, agent, Date.parse('2026-05-02T13:00:00Z'), FIRST_COMPACT_BEFORE + HOUR);
    } finally {
      await server.close();
    }
    expect(clock.pendingSleepers).toBe(0);
    await s.t.close();
  });
});

describe('configuration', () => {
  it('defaults to 90 days of retention and compaction after 7 days, and takes other whole numbers', () => {
    expect(loadConfig({})).toMatchObject({ metricsRetentionDays: 90, metricsCompressAfterDays: 7 });
    expect(loadConfig({ METRICS_RETENTION_DAYS: '2', METRICS_COMPRESS_AFTER_DAYS: '1' })).toMatchObject({ metricsRetentionDays: 2, metricsCompressAfterDays: 1 });
  });

  it.each([
    ['METRICS_RETENTION_DAYS', '0'],
    ['METRICS_RETENTION_DAYS', 'abc'],
    ['METRICS_RETENTION_DAYS', '1.5'],
    ['METRICS_COMPRESS_AFTER_DAYS', '-1'],
    ['METRICS_COMPRESS_AFTER_DAYS', '99999999'],
  ])('%s=%s stops start-up with an error naming the variable', (variable, value) => {
    const load = () => loadConfig({ [variable]: value });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(new RegExp(`^Invalid configuration: ${variable} .*${JSON.stringify(value).replace('.', '\\.')}`));
    try {
      load();
    } catch (err) {
      expect((err as ConfigError).variable).toBe(variable);
    }
  });
});
