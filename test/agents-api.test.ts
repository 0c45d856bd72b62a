// The agents REST surface (contract §2) and its customer scope (contract §1, acceptance 4): the agent
// object's exact fields, list filters, customer assignment, deletion taking the agent's events along,
// and a scoped key seeing, listing and changing only its customer's agents (others are "not found");
// an agent key may read its own agent (the on-device updater) but not list agents.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatusMonitor } from '../src/modules/monitor/status-monitor.js';
import { FakeClock } from '../src/platform/clock.js';
import { createLogger } from '../src/platform/logger.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
interface Agent { id: string; name: string; hostname: string; platform: string | null; customer_id: number | null; status: string }
type Customer = Awaited<ReturnType<typeof createCustomer>>;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const AGENT_FIELDS = [
  'agent_version', 'capabilities', 'connected', 'created_at', 'customer_id', 'disk_used_percent', 'disk_worst_mount', 'hostname', 'id', 'last_heartbeat', 'name', 'note',
  'os_name', 'os_version', 'pending_updates', 'platform', 'primary_ip', 'reboot_required', 'status', 'tags', 'update_requested', 'updater', 'uptime_seconds',
  'version_outdated',
];
const MISSING = 'f'.repeat(32);

let t: TestApp;
let clock: FakeClock;
let monitor: StatusMonitor;
let token: string;
let admin: Record<string, string>;
let agentKey: Record<string, string>;
let a: Customer;
let b: Customer;

beforeAll(async () => {
  clock = new FakeClock('2026-05-01T10:00:00Z');
  t = await buildTestApp({ clock });
  monitor = new StatusMonitor(t.db.db, clock, 60_000, createLogger({ level: 'silent' }));
  token = await adminToken(t);
  admin = bearer(token);
  agentKey = apiKey((await createKey(t.app, admin, 'agent')).key);
  a = await createCustomer(t.app, token, '7001', 'Alpha');
  b = await createCustomer(t.app, token, '7002', 'Beta');
});
afterAll(() => t.close());

const call = (method: Method, url: string, payload?: object, headers = admin) =>
  t.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });

async function ok<T>(method: Method, url: string, payload?: object, headers = admin, status = 200): Promise<T> {
  const res = await call(method, url, payload, headers);
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(status);
  return res.json() as T;
}

/** Registers a new agent (as agents do, with the key given) and optionally sends its first heartbeat. */
async function agent(hostname: string, opts: { name?: string; platform?: string; key?: Record<string, string>; beat?: boolean } = {}) {
  const key = opts.key ?? agentKey;
  const platform = opts.platform ?? 'linux';
  const reg = await ok<{ agent_id: string }>('POST', '/agent/register', { hostname, platform, ...(opts.name ? { name: opts.name } : {}) }, key);
  if (opts.beat) await ok('POST', '/agent/heartbeat', { agent_id: reg.agent_id, platform }, key);
  return reg.agent_id;
}
const ids = (list: Agent[]) => list.map((x) => x.id).sort();

describe('POST /agents (pre-registration)', () => {
  it('answers 201 with exactly the contract’s agent fields, hostname "(ausstehend)" and status unknown', async () => {
    const created = await ok<Record<string, unknown>>('POST', '/agents', { name: 'Empfang-PC', customer_id: a.id }, admin, 201);
    expect(Object.keys(created).sort()).toEqual(AGENT_FIELDS);
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      name: 'Empfang-PC',
      hostname: '(ausstehend)',
      platform: null,
      customer_id: a.id,
      status: 'unknown',
      last_heartbeat: null,
      update_requested: false,
      agent_version: null,
      connected: false,
      created_at: expect.stringMatching(ISO),
      updater: null,
      version_outdated: false,
      tags: [],
      note: '',
      os_name: null,
      os_version: null,
      primary_ip: null,
      uptime_seconds: null,
      disk_used_percent: null,
      disk_worst_mount: null,
      pending_updates: null,
      reboot_required: null,
      capabilities: [],
    });
  });

  it('refuses a second pre-registered agent of the same name with 409', async () => {
    await ok('POST', '/agents', { name: 'twice' }, admin, 201);
    expectError(await call('POST', '/agents', { name: 'twice' }), 409, 'CONFLICT');
  });

  it('answers 404 for an unknown customer and creates nothing', async () => {
    expectError(await call('POST', '/agents', { name: 'orphan', customer_id: 999_999 }), 404, 'NOT_FOUND');
    expect(await t.db.db.selectFrom('agents').select('id').where('name', '=', 'orphan').execute()).toEqual([]);
  });
});

describe('GET /agents filters', () => {
  const made: Record<string, string> = {};
  beforeAll(async () => {
    made.web = await agent('web01.example', { name: 'Web_Server', platform: 'linux', beat: true });
    made.webdash = await agent('web-02.example', { name: 'WebXServer', platform: 'windows' });
    made.fw = await agent('fw.alpha', { name: '100% Firewall', platform: 'freebsd', beat: true });
    made.db = await agent('DB-HOST', { name: 'Datenbank', platform: 'windows' });
    await ok('PUT', `/agents/${made.fw}/customer`, { customer_id: a.id });
    await ok('PUT', `/agents/${made.db}/customer`, { customer_id: b.id });
  });

  const list = (query: string) => ok<Agent[]>('GET', `/agents?${query}`);

  it('filters by customer_id', async () => {
    const ofB = await list(`customer_id=${b.id}`);
    expect(ids(ofB)).toEqual([made.db]);
    expect((await list(`customer_id=${a.id}`)).every((x) => x.customer_id === a.id)).toBe(true);
    expect(ids(await list(`customer_id=${a.id}`))).toContain(made.fw);
  });

  it('filters by platform', async () => {
    expect(ids(await list('platform=freebsd'))).toEqual([made.fw]);
    expect(ids(await list('platform=windows'))).toEqual([made.webdash, made.db].sort());
  });

  it('filters by status', async () => {
    expect(ids(await list('status=online'))).toEqual([made.web, made.fw].sort());
    expect(ids(await list('q=web&status=unknown'))).toEqual([made.webdash]);
  });

  it('matches q as a case-insensitive substring of name or hostname', async () => {
    expect(ids(await list('q=WEB'))).toEqual([made.web, made.webdash].sort());
    expect(ids(await list('q=db-h'))).toEqual([made.db]);
    expect(ids(await list('q=FW.ALP'))).toEqual([made.fw]);
  });

  it("matches q against the primary IP and the customer's name too (issue 57)", async () => {
    const lan = (ip: string) => ({ network: { interfaces: [{ name: 'eth0', status: 'up', ipv4: [`${ip}/24`] }] } });
    await ok('POST', '/agent/heartbeat', { agent_id: made.web, platform: 'linux', ...lan('192.168.77.14') }, agentKey);
    await ok('POST', '/agent/heartbeat', { agent_id: made.fw, platform: 'freebsd', ...lan('10.20.30.40') }, agentKey);
    expect(ids(await list('q=192.168.77'))).toEqual([made.web]);
    expect(ids(await list('q=30.4'))).toEqual([made.fw]);
    // A customer's name in any case: Beta's agents, Alpha's (the firewall and a pre-registered one).
    const ofCustomer = async (id: number) => ids(await list(`customer_id=${id}`));
    expect(ids(await list('q=bEtA'))).toEqual(await ofCustomer(b.id));
    expect(ids(await list('q=bEtA'))).toContain(made.db);
    expect(ids(await list('q=lph'))).toEqual(await ofCustomer(a.id));
    expect(ids(await list('q=lph&platform=freebsd'))).toEqual([made.fw]);
    expect(ids(await list('q=192_168'))).toEqual([]);
    // A search never reaches past a customer-scoped caller's agents, whatever customer it names.
    const readA = apiKey((await createKey(t.app, admin, 'read', a.id)).key);
    expect(await ok<Agent[]>('GET', '/agents?q=Beta', undefined, readA)).toEqual([]);
    expect(ids(await ok<Agent[]>('GET', '/agents?q=Alpha', undefined, readA))).toEqual(await ofCustomer(a.id));
  });

  it('takes % and _ in q literally', async () => {
    expect(ids(await list('q=%25'))).toEqual([made.fw]);
    expect(ids(await list('q=b_s'))).toEqual([made.web]);
    expect(await list('q=Web%25Server')).toEqual([]);
  });

  it('refuses an unknown platform with 400', async () => {
    expectError(await call('GET', '/agents?platform=macos'), 400, 'VALIDATION_ERROR');
  });
});

describe('one agent', () => {
  it('GET /agents/{id} adds system: null before the first heartbeat, the heartbeat body after', async () => {
    const id = await agent('sys.example');
    const before = await ok<Record<string, unknown>>('GET', `/agents/${id}`);
    expect(Object.keys(before).sort()).toEqual([...AGENT_FIELDS, 'system'].sort());
    expect(before).toMatchObject({ id, hostname: 'sys.example', platform: 'linux', status: 'unknown', system: null });
    await ok('POST', '/agent/heartbeat', { agent_id: id, platform: 'linux', uptime_seconds: 42 }, agentKey);
    const after = await ok<Record<string, unknown>>('GET', `/agents/${id}`);
    expect(after).toMatchObject({ status: 'online', last_heartbeat: clock.now().toISOString(), system: { agent_id: id, platform: 'linux', uptime_seconds: 42 } });
  });

  it('answers 404 for an unknown id and 400 for an id that is not hex', async () => {
    expectError(await call('GET', `/agents/${MISSING}`), 404, 'NOT_FOUND');
    expectError(await call('GET', '/agents/not-an-agent-id'), 400, 'VALIDATION_ERROR');
  });

  it('PUT and DELETE /agents/{id}/customer return the agent with its new customer_id', async () => {
    const id = await agent('move.example');
    const put = await ok<Record<string, unknown>>('PUT', `/agents/${id}/customer`, { customer_id: b.id });
    expect(Object.keys(put).sort()).toEqual(AGENT_FIELDS);
    expect(put).toMatchObject({ id, customer_id: b.id });
    expect(await ok('GET', `/agents/${id}`)).toMatchObject({ customer_id: b.id });
    expect(await ok('DELETE', `/agents/${id}/customer`)).toMatchObject({ id, customer_id: null });
    expect(await ok('GET', `/agents/${id}`)).toMatchObject({ customer_id: null });
    expectError(await call('PUT', `/agents/${id}/customer`, { customer_id: 999_999 }), 404, 'NOT_FOUND');
    expectError(await call('PUT', `/agents/${MISSING}/customer`, { customer_id: a.id }), 404, 'NOT_FOUND');
    expect(await ok('GET', `/agents/${id}`)).toMatchObject({ customer_id: null });
  });

  it('DELETE /agents/{id} answers {ok:true}, then 404, and its events are gone', async () => {
    const id = await agent('doomed.example', { beat: true });
    await monitor.runOnce();
    const events = () => t.db.db.selectFrom('agent_events').select('type').where('agent_id', '=', id).execute();
    expect(await events()).toEqual([{ type: 'online' }]);
    expect(await ok('DELETE', `/agents/${id}`)).toEqual({ ok: true });
    expectError(await call('GET', `/agents/${id}`), 404, 'NOT_FOUND');
    expectError(await call('DELETE', `/agents/${id}`), 404, 'NOT_FOUND');
    expect(await events()).toEqual([]);
  });
});

describe('agents of a customer', () => {
  it('GET /customers/{id}/agents lists its agents with last_api_key ("" until a heartbeat with a key)', async () => {
    const c = await createCustomer(t.app, token, '7003', 'Gamma');
    const key = await createKey(t.app, admin, 'agent', c.id);
    const quiet = await agent('quiet.gamma', { key: apiKey(key.key) });
    const beating = await agent('beating.gamma', { key: apiKey(key.key), beat: true });
    const list = await ok<Array<Agent & { last_api_key: string }>>('GET', `/customers/${c.id}/agents`);
    expect(Object.keys(list[0]!).sort()).toEqual([...AGENT_FIELDS, 'last_api_key'].sort());
    expect(list.map((x) => [x.id, x.customer_id, x.last_api_key]).sort()).toEqual(
      [[quiet, c.id, ''], [beating, c.id, key.key_hint]].sort(),
    );
    expectError(await call('GET', '/customers/999999/agents'), 404, 'NOT_FOUND');
  });

  it('deleting a customer unassigns its agents', async () => {
    const c = await createCustomer(t.app, token, '7004', 'Delta');
    const id = (await ok<Agent>('POST', '/agents', { name: 'delta-box', customer_id: c.id }, admin, 201)).id;
    await ok('DELETE', `/customers/${c.id}`);
    expect(await ok('GET', `/agents/${id}`)).toMatchObject({ id, customer_id: null });
  });
});

describe('customer scope', () => {
  let aAgent: string;
  let bAgent: string;
  let freeAgent: string;
  let readA: Record<string, string>;
  let writeA: Record<string, string>;
  let agentA: Record<string, string>;

  beforeAll(async () => {
    readA = apiKey((await createKey(t.app, admin, 'read', a.id)).key);
    writeA = apiKey((await createKey(t.app, admin, 'write', a.id)).key);
    agentA = apiKey((await createKey(t.app, admin, 'agent', a.id)).key);
    aAgent = await agent('scope-a.example', { key: agentA, beat: true });
    bAgent = await agent('scope-b.example', { beat: true });
    freeAgent = await agent('scope-free.example', { beat: true });
    await ok('PUT', `/agents/${bAgent}/customer`, { customer_id: b.id });
    await monitor.runOnce();
  });

  it('a read key of A lists only A’s agents, also when asking for B’s', async () => {
    const listed = await ok<Agent[]>('GET', '/agents', undefined, readA);
    expect(listed.map((x) => x.id)).toContain(aAgent);
    expect(listed.every((x) => x.customer_id === a.id), JSON.stringify(listed)).toBe(true);
    expect(await ok('GET', `/agents?customer_id=${b.id}`, undefined, readA)).toEqual([]);
    expect(ids(await ok<Agent[]>('GET', '/agents?q=scope', undefined, readA))).toEqual([aAgent]);
  });

  it('a read key of A gets 404 for B’s agent and for unassigned agents, like for a missing one', async () => {
    const missing = expectError(await call('GET', `/agents/${MISSING}`, undefined, readA), 404, 'NOT_FOUND');
    for (const id of [bAgent, freeAgent]) {
      for (const path of ['', '/system', '/events']) {
        const body = expectError(await call('GET', `/agents/${id}${path}`, undefined, readA), 404, 'NOT_FOUND');
        if (path === '') expect(body.error).toBe(missing.error);
      }
    }
    expectError(await call('GET', `/customers/${b.id}/agents`, undefined, readA), 404, 'NOT_FOUND');
    expect(await ok('GET', `/agents/${aAgent}/system`, undefined, readA)).toMatchObject({ agent_id: aAgent });
  });

  it('a read key of A sees only A’s agents’ events', async () => {
    const all = await ok<Array<{ agent_id: string }>>('GET', '/agents/events', undefined, admin);
    expect(all.map((e) => e.agent_id)).toEqual(expect.arrayContaining([aAgent, bAgent, freeAgent]));
    const ofA = new Set((await ok<Agent[]>('GET', `/agents?customer_id=${a.id}`)).map((x) => x.id));
    const seen = new Set((await ok<Array<{ agent_id: string }>>('GET', '/agents/events', undefined, readA)).map((e) => e.agent_id));
    expect(seen).toContain(aAgent);
    expect([...seen].filter((id) => !ofA.has(id))).toEqual([]);
    expect(await ok('GET', `/agents/${aAgent}/events`, undefined, readA)).toEqual([expect.objectContaining({ agent_id: aAgent, type: 'online' })]);
  });

  it('an agent key cannot list agents (403) but reads an agent of its scope (200), not others (404)', async () => {
    expectError(await call('GET', '/agents', undefined, agentA), 403, 'FORBIDDEN');
    expectError(await call('GET', '/agents', undefined, agentKey), 403, 'FORBIDDEN');
    expect(await ok('GET', `/agents/${aAgent}`, undefined, agentA)).toMatchObject({ id: aAgent, customer_id: a.id });
    expectError(await call('GET', `/agents/${bAgent}`, undefined, agentA), 404, 'NOT_FOUND');
  });

  it('a write key of A creates agents in A, not in B (404)', async () => {
    expect(await ok('POST', '/agents', { name: 'made-by-a' }, writeA, 201)).toMatchObject({ customer_id: a.id });
    expect(await ok('POST', '/agents', { name: 'made-by-a-2', customer_id: a.id }, writeA, 201)).toMatchObject({ customer_id: a.id });
    expectError(await call('POST', '/agents', { name: 'made-in-b', customer_id: b.id }, writeA), 404, 'NOT_FOUND');
    expect(await t.db.db.selectFrom('agents').select('id').where('name', '=', 'made-in-b').execute()).toEqual([]);
  });

  it('a write key of A cannot move agents to B, take B’s agents, or delete them (404), and nothing changes', async () => {
    expectError(await call('PUT', `/agents/${aAgent}/customer`, { customer_id: b.id }, writeA), 404, 'NOT_FOUND');
    expectError(await call('PUT', `/agents/${bAgent}/customer`, { customer_id: a.id }, writeA), 404, 'NOT_FOUND');
    expectError(await call('PUT', `/agents/${freeAgent}/customer`, { customer_id: a.id }, writeA), 404, 'NOT_FOUND');
    expectError(await call('DELETE', `/agents/${bAgent}/customer`, undefined, writeA), 404, 'NOT_FOUND');
    expectError(await call('DELETE', `/agents/${bAgent}`, undefined, writeA), 404, 'NOT_FOUND');
    const rows = await t.db.db.selectFrom('agents').select(['id', 'customer_id']).where('id', 'in', [aAgent, bAgent, freeAgent]).execute();
    expect(Object.fromEntries(rows.map((r) => [r.id, r.customer_id]))).toEqual({ [aAgent]: a.id, [bAgent]: b.id, [freeAgent]: null });
  });
});
