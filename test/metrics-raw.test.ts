// GET /agents/{id}/metrics (contract §2, §4): heartbeats of every platform become exactly the samples
// their fields say, at the receive time; the default 24-hour window, limit, filters, inclusive ranges,
// the errors, who may read, and that deleting an agent deletes its samples.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { fixtureText } from './helpers/fixtures.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';

type Sample = { time: string; metric: string; label: string; value: number };
type Json = Record<string, unknown>;

let t: TestApp;
let token: string;
let agentKey: string;
/** Reads use an admin key: a signed-in user's token would expire as the clock jumps a day ahead. */
let reader: Record<string, string>;
const clock = new FakeClock('2026-11-22T10:00:00Z');

beforeAll(async () => {
  t = await buildTestApp({ clock });
  token = await adminToken(t);
  agentKey = (await createKey(t.app, bearer(token), 'agent')).key;
  reader = apiKey((await createKey(t.app, bearer(token), 'admin')).key);
});
afterAll(() => t.close());

async function register(key = agentKey, platform = 'linux'): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(key), payload: { hostname: 'metrics-host', platform } });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { agent_id: string }).agent_id;
}

const sendText = (text: string, key = agentKey) =>
  t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: { ...apiKey(key), 'content-type': 'application/json' }, payload: text });

/** A heartbeat with `fields`, received at `iso`. */
async function beatAt(iso: string, id: string, fields: Json): Promise<void> {
  clock.set(iso);
  const res = await sendText(JSON.stringify({ agent_id: id, platform: 'linux', ...fields }));
  expect(res.statusCode, res.body).toBe(200);
}

const get = (id: string, query = '', headers: Record<string, string> = reader) =>
  t.app.inject({ method: 'GET', url: `/api/v1/agents/${id}/metrics${query ? `?${query}` : ''}`, headers });

async function samples(id: string, query = ''): Promise<Sample[]> {
  const res = await get(id, query);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Sample[];
}

const values = (list: Sample[]) => list.map((s) => [s.time, s.value]);
const byKey = (list: Array<Omit<Sample, 'time'>>) => [...list].sort((a, b) => (`${a.metric}\0${a.label}` < `${b.metric}\0${b.label}` ? -1 : 1));
const pointRows = async (id: string) => (await t.db.db.selectFrom('metric_points').select('agent_id').where('agent_id', '=', id).execute()).length;

/** The samples contract §2 names for a heartbeat body, computed from its fields. */
function expectedSamples(body: Json): Array<Omit<Sample, 'time'>> {
  const memory = body.memory as { used_bytes: number; total_bytes: number; used_percent?: number };
  const disks = body.disks as Array<{ mount: string; used_percent: number; used_bytes: number }>;
  const interfaces = (body.network as { interfaces: Array<{ name: string; rx_bytes: number; tx_bytes: number }> }).interfaces;
  const gateways = body.gateways as Array<{ name: string; rtt_ms: number; loss_percent: number }>;
  const scalar = (metric: string, value: number) => ({ metric, label: '', value });
  return [
    scalar('cpu_usage', (body.cpu as { usage_percent: number }).usage_percent),
    scalar('memory_used_bytes', memory.used_bytes),
    scalar('memory_total_bytes', memory.total_bytes),
    scalar('memory_used_percent', memory.used_percent ?? (memory.used_bytes / memory.total_bytes) * 100),
    scalar('uptime_seconds', body.uptime_seconds as number),
    ...disks.flatMap((d) => [
      { metric: 'disk_used_percent', label: d.mount, value: d.used_percent },
      { metric: 'disk_used_bytes', label: d.mount, value: d.used_bytes },
    ]),
    ...interfaces.flatMap((i) => [
      { metric: 'interface_rx_bytes', label: i.name, value: i.rx_bytes },
      { metric: 'interface_tx_bytes', label: i.name, value: i.tx_bytes },
    ]),
    ...gateways.flatMap((g) => [
      { metric: 'gateway_rtt_ms', label: g.name, value: g.rtt_ms },
      { metric: 'gateway_loss_percent', label: g.name, value: g.loss_percent },
    ]),
  ];
}

describe('samples from heartbeats', () => {
  it.each(['freebsd', 'linux', 'windows'])('stores exactly the samples of a %s heartbeat, at its receive time', async (platform) => {
    const id = await register(agentKey, platform);
    const fixture = fixtureText(`heartbeat-${platform}.json`);
    expect(fixture).toMatch(/^\{\n "agent_id": "[0-9a-f]+"/);
    const text = fixture.replace(/^\{\n "agent_id": "[0-9a-f]+"/, `{\n "agent_id": "${id}"`);
    clock.set('2026-11-22T10:00:00.250Z');
    expect((await sendText(text)).statusCode).toBe(200);

    const got = await samples(id);
    const want = expectedSamples(JSON.parse(text) as Json);
    expect(want.length).toBeGreaterThan(10);
    expect(got.every((s) => s.time === '2026-11-22T10:00:00.250Z')).toBe(true);
    expect(byKey(got.map(({ metric, label, value }) => ({ metric, label, value })))).toEqual(byKey(want));
  });

  it('answers 200 to a heartbeat with missing and non-numeric fields and stores only the numeric ones', async () => {
    const id = await register();
    await beatAt('2026-11-22T10:00:00Z', id, {
      cpu: { usage_percent: '17.4' },
      memory: { used_bytes: 1024, total_bytes: 4096 },
      uptime_seconds: null,
      disks: [{ mount: '/', used_percent: 'full', used_bytes: 5 }, { used_percent: 3 }],
      network: { interfaces: 'eth0' },
    });
    await beatAt('2026-11-22T10:01:00Z', id, { cpu: 'busy' });
    const got = await samples(id);
    expect(byKey(got.map(({ metric, label, value }) => ({ metric, label, value })))).toEqual(
      byKey([
        { metric: 'memory_used_bytes', label: '', value: 1024 },
        { metric: 'memory_total_bytes', label: '', value: 4096 },
        { metric: 'memory_used_percent', label: '', value: 25 },
        { metric: 'disk_used_bytes', label: '/', value: 5 },
      ]),
    );
  });

  it('stores nothing for a refused heartbeat: unknown agent, or an agent of another customer', async () => {
    const before = await t.db.db.selectFrom('metric_points').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
    const unknown = JSON.stringify({ agent_id: 'abcdef0123456789abcdef0123456789', platform: 'linux', cpu: { usage_percent: 5 } });
    expectError(await sendText(unknown), 404, 'AGENT_NOT_REGISTERED');

    const [a, b] = [await createCustomer(t.app, token, 'M-1'), await createCustomer(t.app, token, 'M-2')];
    const keyA = (await createKey(t.app, bearer(token), 'agent', a.id)).key;
    const keyB = (await createKey(t.app, bearer(token), 'agent', b.id)).key;
    const id = await register(keyA);
    expectError(await sendText(JSON.stringify({ agent_id: id, platform: 'linux', cpu: { usage_percent: 5 } }), keyB), 404, 'AGENT_NOT_REGISTERED');
    expect(await samples(id)).toEqual([]);
    const after = await t.db.db.selectFrom('metric_points').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });
});

describe('query parameters', () => {
  it('without from/to returns the last 24 hours: exactly 24 h old is in, 24 h and 1 s is out', async () => {
    const id = await register();
    await beatAt('2026-11-22T10:00:00Z', id, { cpu: { usage_percent: 1 } });
    await beatAt('2026-11-22T10:00:01Z', id, { cpu: { usage_percent: 2 } });
    await beatAt('2026-11-22T20:00:00Z', id, { cpu: { usage_percent: 3 } });
    clock.set('2026-11-23T10:00:01Z');
    expect(values(await samples(id))).toEqual([
      ['2026-11-22T10:00:01.000Z', 2],
      ['2026-11-22T20:00:00.000Z', 3],
    ]);
  });

  it('returns the most recent `limit` samples in ascending order; clamps large limits; refuses bad ones', async () => {
    const id = await register();
    for (let i = 1; i <= 5; i++) await beatAt(`2026-11-22T11:0${i}:00Z`, id, { cpu: { usage_percent: i } });
    expect(values(await samples(id, 'metric=cpu_usage&limit=2'))).toEqual([
      ['2026-11-22T11:04:00.000Z', 4],
      ['2026-11-22T11:05:00.000Z', 5],
    ]);
    expect((await samples(id, 'limit=1')).map((s) => s.value)).toEqual([5]);
    expect((await samples(id, 'metric=cpu_usage')).map((s) => s.value)).toEqual([1, 2, 3, 4, 5]);
    for (const limit of ['100000', '100001', '999999999']) expect((await samples(id, `limit=${limit}`)).length).toBe(5);
    for (const limit of ['0', '-1', '1.5', 'abc', '']) expectError(await get(id, `limit=${limit}`), 400, 'VALIDATION_ERROR');
  });

  it('filters by metric, by label, and by both', async () => {
    const id = await register();
    const disks = [
      { mount: '/', used_percent: 40, used_bytes: 400 },
      { mount: '/data', used_percent: 70, used_bytes: 700 },
    ];
    await beatAt('2026-11-22T12:00:00Z', id, { cpu: { usage_percent: 9 }, disks });
    const strip = (list: Sample[]) => byKey(list.map(({ metric, label, value }) => ({ metric, label, value })));
    expect(strip(await samples(id, 'metric=disk_used_percent'))).toEqual([
      { metric: 'disk_used_percent', label: '/', value: 40 },
      { metric: 'disk_used_percent', label: '/data', value: 70 },
    ]);
    expect(strip(await samples(id, 'label=%2Fdata'))).toEqual([
      { metric: 'disk_used_bytes', label: '/data', value: 700 },
      { metric: 'disk_used_percent', label: '/data', value: 70 },
    ]);
    expect(strip(await samples(id, 'metric=disk_used_bytes&label=/'))).toEqual([{ metric: 'disk_used_bytes', label: '/', value: 400 }]);
    expect(await samples(id, 'metric=gateway_rtt_ms')).toEqual([]);
    expect(await samples(id, 'label=/nowhere')).toEqual([]);
  });

  it('takes from and to as an inclusive window; from after to is 400', async () => {
    const id = await register();
    for (let i = 0; i < 4; i++) await beatAt(`2026-11-22T13:0${i}:00Z`, id, { cpu: { usage_percent: i } });
    expect(values(await samples(id, 'from=2026-11-22T13:01:00Z&to=2026-11-22T13:02:00Z'))).toEqual([
      ['2026-11-22T13:01:00.000Z', 1],
      ['2026-11-22T13:02:00.000Z', 2],
    ]);
    expect(values(await samples(id, 'from=2026-11-22T13:03:00Z&to=2026-11-22T13:03:00Z'))).toEqual([['2026-11-22T13:03:00.000Z', 3]]);
    expect((await samples(id, 'from=2026-11-22T13:02:30Z')).map((s) => s.value)).toEqual([3]);
    expectError(await get(id, 'from=2026-11-22T13:02:00Z&to=2026-11-22T13:01:59Z'), 400, 'VALIDATION_ERROR');
    expectError(await get(id, 'from=yesterday'), 400, 'VALIDATION_ERROR');
  });

  it('refuses an unknown metric name with 400 VALIDATION_ERROR and details', async () => {
    const id = await register();
    const body = expectError(await get(id, 'metric=cpu_temperature'), 400, 'VALIDATION_ERROR');
    expect(body.details).toEqual([expect.objectContaining({ path: 'metric', message: expect.any(String) })]);
  });
});

describe('access', () => {
  const endpoints = ['', '/summary?metric=cpu_usage', '/rates', '/latest'];

  it.each(endpoints)('answers 404 NOT_FOUND for an unknown agent on /metrics%s', async (path) => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/agents/0123456789abcdef0123456789abcdef/metrics${path}`, headers: reader });
    expectError(res, 404, 'NOT_FOUND');
  });

  it('lets read keys of the agent’s customer or of no customer read; other customers get 404, agent keys 403', async () => {
    const [a, b] = [await createCustomer(t.app, token, 'M-10'), await createCustomer(t.app, token, 'M-11')];
    const id = await register((await createKey(t.app, bearer(token), 'agent', a.id)).key);
    await beatAt('2026-11-22T14:00:00Z', id, { cpu: { usage_percent: 42 } });
    const readA = (await createKey(t.app, bearer(token), 'read', a.id)).key;
    const readAll = (await createKey(t.app, bearer(token), 'read')).key;
    const readB = (await createKey(t.app, bearer(token), 'read', b.id)).key;
    for (const key of [readA, readAll]) {
      const res = await get(id, '', apiKey(key));
      expect(res.statusCode, res.body).toBe(200);
      expect((res.json() as Sample[]).map((s) => s.value)).toEqual([42]);
    }
    for (const path of endpoints) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/agents/${id}/metrics${path}`, headers: apiKey(readB) });
      expectError(res, 404, 'NOT_FOUND');
    }
    expectError(await get(id, '', apiKey(agentKey)), 403, 'FORBIDDEN');
    expectError(await get(id, '', {}), 401, 'UNAUTHORIZED');
  });
});

describe('deleting the agent', () => {
  it('removes its recent and compacted samples', async () => {
    const id = await register();
    await beatAt('2026-11-22T15:00:00Z', id, { cpu: { usage_percent: 8 } });
    // An hour as compaction leaves it: read alike by the query.
    await t.db.db
      .insertInto('metric_hours')
      .values({
        agent_id: id,
        metric: 'cpu_usage',
        label: '',
        hour: new Date('2026-11-22T14:00:00Z'),
        offsets_ms: sql`${'{60000}'}::int[]`,
        vals: sql`${'{3}'}::float8[]`,
        sample_count: 1,
        value_sum: 3,
        value_min: 3,
        value_max: 3,
      })
      .execute();
    expect(values(await samples(id))).toEqual([
      ['2026-11-22T14:01:00.000Z', 3],
      ['2026-11-22T15:00:00.000Z', 8],
    ]);

    const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/agents/${id}`, headers: bearer(token) });
    expect(res.statusCode, res.body).toBe(200);
    expect(await pointRows(id)).toBe(0);
    expect(await t.db.db.selectFrom('metric_hours').select('agent_id').where('agent_id', '=', id).execute()).toEqual([]);
    expectError(await get(id), 404, 'NOT_FOUND');
  });
});
