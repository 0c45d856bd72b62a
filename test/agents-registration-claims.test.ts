// Registration is the agent's act (issue 57, item 2): only agent keys register. A customer-scoped
// write or admin key, or a write user limited to a customer, used to claim an agent that had no
// customer through POST /agent/register (it joined their customer, hostname and platform overwritten)
// and then run commands on it. Now every credential but an agent key gets 403 and the agent stays as
// it was; an agent key of another customer gets 404; an agent key of a customer that registers an agent
// without one makes it join that customer, and the audit log says who, which agent and which customer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createCustomer, createKey, login, seedUser } from './helpers/identity.js';

type Key = Awaited<ReturnType<typeof createKey>>;
type Customer = Awaited<ReturnType<typeof createCustomer>>;
interface AuditEntry {
  actor_type: string;
  actor: string;
  action: string;
  method: string;
  path: string;
  status_code: number;
  target: string | null;
}

let t: TestApp;
let admin: string;
let a: Customer;
let b: Customer;
let agentKey: Key;
let agentA: Key;
let agentB: Key;
/** Every kind of credential that is not an agent key; filled in beforeAll. */
const OTHERS = [
  'a write key of customer A',
  'an admin key of customer A',
  'a read key of customer A',
  'a write user of customer A',
  'an admin user of customer A',
  'an unscoped write key',
  'an unscoped admin key',
  'an unscoped admin user',
] as const;
const others = {} as Record<(typeof OTHERS)[number], Record<string, string>>;

beforeAll(async () => {
  t = await buildTestApp();
  admin = await adminToken(t);
  a = await createCustomer(t.app, admin, 'CLAIM-A', 'Alpha Steuerberatung');
  b = await createCustomer(t.app, admin, 'CLAIM-B', 'Beta Bau');
  agentKey = await createKey(t.app, bearer(admin), 'agent');
  agentA = await createKey(t.app, bearer(admin), 'agent', a.id);
  agentB = await createKey(t.app, bearer(admin), 'agent', b.id);
  await seedUser(t, 'writer-a', 'writer-a-pass', { role: 'write', customer_ids: [a.id] });
  await seedUser(t, 'admin-a', 'admin-a-pass', { role: 'admin', customer_ids: [a.id] });
  others['a write key of customer A'] = apiKey((await createKey(t.app, bearer(admin), 'write', a.id)).key);
  others['an admin key of customer A'] = apiKey((await createKey(t.app, bearer(admin), 'admin', a.id)).key);
  others['a read key of customer A'] = apiKey((await createKey(t.app, bearer(admin), 'read', a.id)).key);
  others['a write user of customer A'] = bearer(await login(t.app, 'writer-a', 'writer-a-pass'));
  others['an admin user of customer A'] = bearer(await login(t.app, 'admin-a', 'admin-a-pass'));
  others['an unscoped write key'] = apiKey((await createKey(t.app, bearer(admin), 'write')).key);
  others['an unscoped admin key'] = apiKey((await createKey(t.app, bearer(admin), 'admin')).key);
  others['an unscoped admin user'] = bearer(admin);
});
afterAll(() => t.close());

const register = (headers: Record<string, string>, body: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers, payload: body });

async function registered(key: Key, body: Record<string, unknown>) {
  const res = await register(apiKey(key.key), body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { agent_id: string; name: string; pre_registered: boolean };
}

/** The stored agent, as the database has it. */
const stored = (id: string) =>
  t.db.db.selectFrom('agents').select(['id', 'name', 'hostname', 'platform', 'customer_id', 'agent_version']).where('id', '=', id).executeTakeFirst();
const agentCount = async () => Number((await t.db.db.selectFrom('agents').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

/** A registered agent that belongs to no customer (an unscoped agent key registered it). */
const unassigned = async (hostname: string) => (await registered(agentKey, { hostname, platform: 'freebsd', agent_version: '1.0.0' })).agent_id;

async function auditOf(action: string, headers: Record<string, string> = bearer(admin)): Promise<AuditEntry[]> {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/audit?action=${action}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as AuditEntry[];
}

describe('only agent keys register', () => {
  it.each(OTHERS)('%s cannot claim an agent without a customer: 403, the agent unchanged', async (who) => {
    const id = await unassigned(`free-${who.replaceAll(' ', '-')}`);
    const before = await stored(id);
    expect(before).toMatchObject({ customer_id: null, platform: 'freebsd' });
    expectError(await register(others[who], { agent_id: id, hostname: 'claim', platform: 'linux' }), 403, 'FORBIDDEN');
    expect(await stored(id)).toEqual(before);
    // And it stays out of a customer-scoped caller's reach: still "not found" for them.
    if (who.endsWith('of customer A')) {
      expectError(await t.app.inject({ method: 'GET', url: `/api/v1/agents/${id}`, headers: others[who] }), 404, 'NOT_FOUND');
    }
  });

  it.each(OTHERS)('%s cannot register a new agent either (403, none created)', async (who) => {
    const count = await agentCount();
    expectError(await register(others[who], { hostname: 'new-by-operator', platform: 'linux' }), 403, 'FORBIDDEN');
    expect(await agentCount()).toBe(count);
  });

  it('refuses them before the body is looked at: an invalid body is still 403, not 400', async () => {
    expectError(await register(others['a write key of customer A'], { hostname: '' }), 403, 'FORBIDDEN');
  });
});

describe('agent keys of different customers', () => {
  it("an agent key of customer B cannot rewrite an agent of customer A: 404, the agent unchanged", async () => {
    const inA = (await registered(agentA, { hostname: 'fw-alpha', platform: 'freebsd', agent_version: '2.0.0' })).agent_id;
    const before = await stored(inA);
    expectError(await register(apiKey(agentB.key), { agent_id: inA, hostname: 'claim', platform: 'linux', agent_version: '9.9.9' }), 404, 'NOT_FOUND');
    expect(await stored(inA)).toEqual(before);
    expect(before).toMatchObject({ customer_id: a.id, hostname: 'fw-alpha' });
  });

  it('an agent key of customer A registering an agent without a customer makes it join A, and the audit log says so', async () => {
    const id = await unassigned('lab-fw');
    const res = await registered(agentA, { agent_id: id, hostname: 'lab-fw.alpha', platform: 'freebsd' });
    expect(res).toStrictEqual({ agent_id: id, name: 'lab-fw', pre_registered: false });
    expect(await stored(id)).toMatchObject({ customer_id: a.id, hostname: 'lab-fw.alpha' });

    const entries = (await auditOf('agent.join_customer')).filter((e) => e.target?.includes(id));
    expect(entries).toEqual([
      {
        id: expect.any(Number),
        time: expect.any(String),
        actor_type: 'api_key',
        actor: agentA.key_hint,
        action: 'agent.join_customer',
        method: 'POST',
        path: '/api/v1/agent/register',
        status_code: 200,
        ip: expect.any(String),
        target: `agent ${id} (lab-fw) joined customer CLAIM-A Alpha Steuerberatung`,
      },
    ]);
    // The entry is about customer A: A's own people find it in their (filtered) log.
    expect((await auditOf('agent.join_customer', others['a write user of customer A'])).map((e) => e.target)).toContain(entries[0]!.target);

    // Registering again (a restart) changes no customer and writes no further entry.
    await registered(agentA, { agent_id: id, hostname: 'lab-fw.alpha', platform: 'freebsd' });
    expect((await auditOf('agent.join_customer')).filter((e) => e.target?.includes(id))).toHaveLength(1);
  });

  it('an ordinary first registration with a scoped key is not a join: no entry', async () => {
    const before = (await auditOf('agent.join_customer')).length;
    const res = await registered(agentA, { hostname: 'fresh-alpha', platform: 'linux' });
    expect(await stored(res.agent_id)).toMatchObject({ customer_id: a.id });
    expect(await auditOf('agent.join_customer')).toHaveLength(before);
  });
});

describe('what keeps working', () => {
  it('an agent registers again under its id after a restart, with its own key', async () => {
    const first = await registered(agentA, { hostname: 'pve-alpha', platform: 'linux', agent_version: '1.0.0' });
    const again = await registered(agentA, { agent_id: first.agent_id, hostname: 'pve-alpha-2', platform: 'linux', agent_version: '1.1.0' });
    expect(again).toStrictEqual({ agent_id: first.agent_id, name: 'pve-alpha', pre_registered: false });
    expect(await stored(first.agent_id)).toMatchObject({ customer_id: a.id, hostname: 'pve-alpha-2', agent_version: '1.1.0' });
  });

  it('an unscoped agent key registers its agent again after an operator assigned it to a customer', async () => {
    const id = await unassigned('moved-fw');
    const assign = await t.app.inject({ method: 'PUT', url: `/api/v1/agents/${id}/customer`, headers: bearer(admin), payload: { customer_id: b.id } });
    expect(assign.statusCode, assign.body).toBe(200);
    await registered(agentKey, { agent_id: id, hostname: 'moved-fw-2', platform: 'freebsd' });
    expect(await stored(id)).toMatchObject({ customer_id: b.id, hostname: 'moved-fw-2' });
  });

  it("a scoped agent key adopts its customer's pre-registered agent by name; another customer's key does not", async () => {
    const pre = await t.app.inject({ method: 'POST', url: '/api/v1/agents', headers: bearer(admin), payload: { name: 'fw-filiale', customer_id: a.id } });
    expect(pre.statusCode, pre.body).toBe(201);
    const preId = (pre.json() as { id: string }).id;
    const inB = await registered(agentB, { name: 'fw-filiale', hostname: 'fw.beta', platform: 'freebsd' });
    expect(inB.pre_registered).toBe(false);
    expect(await stored(inB.agent_id)).toMatchObject({ customer_id: b.id });
    expect(await stored(preId)).toMatchObject({ hostname: '(ausstehend)', customer_id: a.id });
    const adopted = await registered(agentA, { name: 'fw-filiale', hostname: 'fw.alpha', platform: 'freebsd' });
    expect(adopted).toStrictEqual({ agent_id: preId, name: 'fw-filiale', pre_registered: true });
    expect(await stored(preId)).toMatchObject({ hostname: 'fw.alpha', platform: 'freebsd', customer_id: a.id });
  });
});
