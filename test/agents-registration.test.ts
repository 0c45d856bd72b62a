// Registration (contract §2): an agent is matched by its id, else a pre-registered record is adopted by
// name (or hostname) within the key's customer and keeps its id, else a new agent is created — never
// matched by hostname. Ids are 16–64 hex characters, stored lower-case. Heartbeats reach only agents
// that exist within the key's customer.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';

const HEX32 = /^[0-9a-f]{32}$/;

let t: TestApp;
let token: string;
let agentKey: string;

beforeAll(async () => {
  t = await buildTestApp();
  token = await adminToken(t);
  agentKey = (await createKey(t.app, bearer(token), 'agent')).key;
});
afterAll(() => t.close());

const register = (body: Record<string, unknown>, key = agentKey) =>
  t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(key), payload: body });

async function registered(body: Record<string, unknown>, key = agentKey) {
  const res = await register(body, key);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { agent_id: string; name: string; pre_registered: boolean };
}

async function preRegister(name: string, customer_id?: number) {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/agents', headers: bearer(token), payload: { name, ...(customer_id ? { customer_id } : {}) } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; name: string; hostname: string; status: string; customer_id: number | null };
}

async function agent(id: string) {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/agents/${id}`, headers: bearer(token) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { id: string; name: string; hostname: string; platform: string | null; customer_id: number | null; agent_version: string | null };
}

const agentCount = async () => Number((await t.db.db.selectFrom('agents').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

const heartbeat = (text: string, key = agentKey) =>
  t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: { ...apiKey(key), 'content-type': 'application/json' }, payload: text });

describe('POST /agent/register', () => {
  it('creates a new agent with a generated 32-hex id, named after its hostname', async () => {
    const before = await agentCount();
    const res = await register({ hostname: 'web-01', platform: 'linux', agent_version: '1.4.2' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { agent_id: string };
    expect(body).toStrictEqual({ agent_id: expect.stringMatching(HEX32), name: 'web-01', pre_registered: false });
    expect(await agentCount()).toBe(before + 1);
    expect(await agent(body.agent_id)).toMatchObject({ name: 'web-01', hostname: 'web-01', platform: 'linux', agent_version: '1.4.2' });
  });

  it('reuses the agent with the given id, taking the new hostname', async () => {
    const first = await registered({ hostname: 'old-host', platform: 'linux' });
    const before = await agentCount();
    const again = await registered({ agent_id: first.agent_id, hostname: 'new-host', platform: 'linux' });
    expect(again).toStrictEqual({ agent_id: first.agent_id, name: 'old-host', pre_registered: false });
    expect(await agentCount()).toBe(before);
    expect(await agent(first.agent_id)).toMatchObject({ hostname: 'new-host' });
  });

  it('never matches by hostname: a second agent with the same hostname gets its own id', async () => {
    const a = await registered({ hostname: 'same-host', platform: 'linux' });
    const b = await registered({ hostname: 'same-host', platform: 'linux' });
    expect(b.agent_id).not.toBe(a.agent_id);
  });

  it('adopts a pre-registered agent by name: it keeps its id and gets the real hostname', async () => {
    const pre = await preRegister('fw-kunde-1');
    expect(pre).toMatchObject({ id: expect.stringMatching(HEX32), name: 'fw-kunde-1', hostname: '(ausstehend)', status: 'unknown', platform: null, last_heartbeat: null });
    const before = await agentCount();
    const res = await registered({ name: 'fw-kunde-1', hostname: 'opnsense.local', platform: 'freebsd' });
    expect(res).toStrictEqual({ agent_id: pre.id, name: 'fw-kunde-1', pre_registered: true });
    expect(await agentCount()).toBe(before);
    expect(await agent(pre.id)).toMatchObject({ name: 'fw-kunde-1', hostname: 'opnsense.local', platform: 'freebsd' });
  });

  it('adopts a pre-registered agent by hostname when no name is sent', async () => {
    const pre = await preRegister('srv-lager');
    const res = await registered({ hostname: 'srv-lager', platform: 'windows' });
    expect(res).toStrictEqual({ agent_id: pre.id, name: 'srv-lager', pre_registered: true });
    expect(await agent(pre.id)).toMatchObject({ hostname: 'srv-lager', platform: 'windows' });
  });

  it('keeps the pre-registered id even when the agent brings an id of its own', async () => {
    const pre = await preRegister('fw-kunde-2');
    const own = 'aa'.repeat(16);
    const res = await registered({ agent_id: own, name: 'fw-kunde-2', hostname: 'fw2.local', platform: 'freebsd' });
    expect(res).toStrictEqual({ agent_id: pre.id, name: 'fw-kunde-2', pre_registered: true });
    const lookup = await t.app.inject({ method: 'GET', url: `/api/v1/agents/${own}`, headers: bearer(token) });
    expectError(lookup, 404, 'NOT_FOUND');
  });

  it.each([
    ['non-hex', 'xyz'.repeat(11)],
    ['15 hex characters', 'a'.repeat(15)],
    ['65 hex characters', 'a'.repeat(65)],
  ])('rejects a %s agent_id with 400', async (_case, agent_id) => {
    const before = await agentCount();
    expectError(await register({ agent_id, hostname: 'bad-id', platform: 'linux' }), 400, 'VALIDATION_ERROR');
    expect(await agentCount()).toBe(before);
  });

  it.each([16, 64])('accepts a supplied id of %i hex characters', async (length) => {
    const id = 'b'.repeat(length);
    expect(await registered({ agent_id: id, hostname: `len-${length}`, platform: 'linux' })).toMatchObject({ agent_id: id });
    expect((await agent(id)).hostname).toBe(`len-${length}`);
  });

  it('accepts an upper-case hex id and stores it lower-case', async () => {
    const upper = 'C0FFEE00DEADBEEF0123456789ABCDEF';
    const res = await registered({ agent_id: upper, hostname: 'upper', platform: 'linux' });
    expect(res.agent_id).toBe(upper.toLowerCase());
    const again = await registered({ agent_id: upper, hostname: 'upper-2', platform: 'linux' });
    expect(again.agent_id).toBe(upper.toLowerCase());
    const rows = await t.db.db.selectFrom('agents').select('id').where(sql`lower(id)`, '=', upper.toLowerCase()).execute();
    expect(rows).toEqual([{ id: upper.toLowerCase() }]);
  });

  it('rejects the reserved hostname "(ausstehend)" with 400', async () => {
    expectError(await register({ hostname: '(ausstehend)', platform: 'linux' }), 400, 'VALIDATION_ERROR');
  });

  it('answers 409 for a second pre-registered agent of the same name', async () => {
    await preRegister('dup-name');
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/agents', headers: bearer(token), payload: { name: 'dup-name' } });
    expectError(res, 409, 'CONFLICT');
  });

  it('refuses a read key with 403', async () => {
    const readKey = (await createKey(t.app, bearer(token), 'read')).key;
    expectError(await register({ hostname: 'reader', platform: 'linux' }, readKey), 403, 'FORBIDDEN');
  });

  it('answers 404 AGENT_NOT_REGISTERED to a heartbeat for an unknown agent', async () => {
    expectError(await heartbeat('{"agent_id":"0000000000000000ffffffffffffffff","platform":"linux"}'), 404, 'AGENT_NOT_REGISTERED');
  });
});

describe('registration and heartbeats under customer-scoped keys', () => {
  let a: { id: number };
  let b: { id: number };
  let keyA: string;
  let keyB: string;
  beforeAll(async () => {
    a = await createCustomer(t.app, token, 'REG-A');
    b = await createCustomer(t.app, token, 'REG-B');
    keyA = (await createKey(t.app, bearer(token), 'agent', a.id)).key;
    keyB = (await createKey(t.app, bearer(token), 'agent', b.id)).key;
  });

  it('keeps two agents with the same hostname under different customers apart', async () => {
    const inA = await registered({ hostname: 'fw', platform: 'freebsd' }, keyA);
    const inB = await registered({ hostname: 'fw', platform: 'freebsd' }, keyB);
    expect(inA.agent_id).not.toBe(inB.agent_id);
    expect((await agent(inA.agent_id)).customer_id).toBe(a.id);
    expect((await agent(inB.agent_id)).customer_id).toBe(b.id);
  });

  it("does not adopt another customer's pre-registered agent; it creates one in its own customer", async () => {
    const preB = await preRegister('branch-fw', b.id);
    const res = await registered({ name: 'branch-fw', hostname: 'branch.local', platform: 'freebsd' }, keyA);
    expect(res.pre_registered).toBe(false);
    expect(res.agent_id).not.toBe(preB.id);
    expect((await agent(res.agent_id)).customer_id).toBe(a.id);
    expect(await agent(preB.id)).toMatchObject({ hostname: '(ausstehend)', customer_id: b.id });
  });

  it("an unassigned agent registering with a customer's key joins that customer and keeps its id", async () => {
    const unassigned = await registered({ hostname: 'lab-fw', platform: 'freebsd' });
    expect((await agent(unassigned.agent_id)).customer_id).toBeNull();
    const again = await registered({ agent_id: unassigned.agent_id, hostname: 'lab-fw2', platform: 'freebsd' }, keyA);
    expect(again).toStrictEqual({ agent_id: unassigned.agent_id, name: 'lab-fw', pre_registered: false });
    expect(await agent(unassigned.agent_id)).toMatchObject({ customer_id: a.id, hostname: 'lab-fw2' });
  });

  it("cannot take over another customer's agent by its id: 404, and the agent is unchanged", async () => {
    const inB = await registered({ hostname: 'b-fw', platform: 'freebsd' }, keyB);
    const before = await agent(inB.agent_id);
    expectError(await register({ agent_id: inB.agent_id, hostname: 'taken', platform: 'linux' }, keyA), 404, 'NOT_FOUND');
    expect(await agent(inB.agent_id)).toEqual(before);
  });

  it('an agent deleted on the server registers again under its own id', async () => {
    const first = await registered({ hostname: 'gone-host', platform: 'linux' }, keyA);
    const del = await t.app.inject({ method: 'DELETE', url: `/api/v1/agents/${first.agent_id}`, headers: bearer(token) });
    expect(del.statusCode, del.body).toBe(200);
    const again = await registered({ agent_id: first.agent_id, hostname: 'gone-host', platform: 'linux' }, keyA);
    expect(again).toStrictEqual({ agent_id: first.agent_id, name: 'gone-host', pre_registered: false });
    expect(await agent(first.agent_id)).toMatchObject({ customer_id: a.id });
  });

  it("answers 404 AGENT_NOT_REGISTERED to a heartbeat for another customer's agent, leaving it unchanged", async () => {
    const inB = await registered({ hostname: 'b-only', platform: 'linux' }, keyB);
    const stored = () =>
      t.db.db
        .selectFrom('agents')
        .select(['hostname', 'platform', 'last_heartbeat', 'last_api_key', sql<string | null>`system::text`.as('system')])
        .where('id', '=', inB.agent_id)
        .executeTakeFirstOrThrow();
    const before = await stored();
    const res = await heartbeat(`{"agent_id":"${inB.agent_id}","platform":"windows","hostname":"hijacked"}`, keyA);
    expectError(res, 404, 'AGENT_NOT_REGISTERED');
    expect(await stored()).toEqual(before);
    expect(before).toMatchObject({ hostname: 'b-only', last_heartbeat: null, system: null });
  });
});
