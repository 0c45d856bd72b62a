// GET /agents/attention (the web console's fleet page): which agents need a technician and why —
// offline or stale by heartbeat age, updates the agent reports, certificates in use expiring within
// the window or expired — read from each agent's latest heartbeat whatever shape it sent, and only
// within the caller's customer scope.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { fixtureText } from './helpers/fixtures.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';

interface Item {
  agent: { id: string; name: string; status: string; customer_id: number | null };
  reasons: Array<{ kind: string; message: string; valid_to?: string }>;
}

const firewall = JSON.parse(fixtureText('heartbeat-freebsd.json')) as Record<string, unknown>;

describe('agents needing attention', () => {
  const clock = new FakeClock('2026-12-20T12:00:00.000Z');
  let t: TestApp;
  let auth: Record<string, string>;
  let customerId: number;
  let scopedRead: Record<string, string>;
  let agentKeyHeaders: Record<string, string>;
  const ids: Record<string, string> = {};

  const list = async (headers = auth, query = '') => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/agents/attention${query}`, headers });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Item[];
  };
  const byName = (items: Item[]) => Object.fromEntries(items.map((i) => [i.agent.name, i.reasons.map((r) => r.kind)]));

  async function enrol(key: Record<string, string>, name: string, body: Record<string, unknown>) {
    const reg = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: key, payload: { hostname: name, name, platform: 'freebsd' } });
    expect(reg.statusCode, reg.body).toBe(200);
    const id = (reg.json() as { agent_id: string }).agent_id;
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: key, payload: { ...body, agent_id: id, hostname: name } });
    expect(res.statusCode, res.body).toBe(200);
    ids[name] = id;
  }

  beforeAll(async () => {
    t = await buildTestApp({ clock });
    const token = await adminToken(t);
    auth = bearer(token);
    customerId = (await createCustomer(t.app, token, '10001')).id;
    const agentKey = apiKey((await createKey(t.app, auth, 'agent')).key);
    agentKeyHeaders = agentKey;
    const customerAgentKey = apiKey((await createKey(t.app, auth, 'agent', customerId)).key);
    scopedRead = apiKey((await createKey(t.app, auth, 'read', customerId)).key);

    // The fixture as sent: updates available (2 packages); cert-0 in use, valid to 2027-01-15 (26 days).
    await enrol(agentKey, 'fw-fixture', firewall);
    await enrol(agentKey, 'fw-quiet', { platform: 'freebsd', updates: { available: false }, certificates: [] });
    await enrol(customerAgentKey, 'fw-customer', {
      platform: 'freebsd',
      certificates: [
        { name: 'old', valid_to: '2026-12-01T00:00:00Z', in_use: true },
        { name: 'spare', valid_to: '2026-12-25T00:00:00Z', in_use: false },
        { name: 'later', valid_to: '2027-06-01T00:00:00Z', in_use: true },
      ],
    });
    // Shapes a careless or hostile agent might send: nothing here may fail the list or count.
    await enrol(agentKey, 'fw-odd', {
      platform: 'freebsd',
      updates: { available: 'yes', packages: 'many' },
      certificates: ['x', 7, null, { name: { a: 1 }, valid_to: 'next tuesday', in_use: true }, { valid_to: 20270101 }],
      disks: ['x', 7, null, { mount: '/s', used_percent: '99' }, { mount: '/z', used_bytes: 5, total_bytes: 0 }, { mount: '/n', used_percent: Number.NaN }],
    });
    // One disk over 90 % by its own figure, one by its bytes, one half full.
    await enrol(agentKey, 'fw-disk', {
      platform: 'freebsd',
      disks: [
        { mount: '/', used_percent: 93.6 },
        { mount: '/var', used_bytes: 95, total_bytes: 100 },
        { mount: '/data', used_percent: 50 },
      ],
    });
    // Many certificates with names that need escaping: their facts travel as one long array element
    // (over 1 KB, where the embedded database's long-text path starts).
    await enrol(agentKey, 'fw-many-certs', {
      platform: 'freebsd',
      certificates: [
        ...Array.from({ length: 20 }, (_, i) => ({ name: `spare-${i} ${'x'.repeat(60)}`, valid_to: '2030-01-01T00:00:00Z', in_use: true })),
        { name: 'VPN "Zürich" \\ {Müller}, 東京', valid_to: '2027-01-10T00:00:00Z', in_use: true },
      ],
    });
    await enrol(agentKey, 'fw-array-system', { platform: 'freebsd', updates: [true], certificates: { name: 'not a list' } });
  });
  afterAll(() => t.close());

  it('lists updates and certificates in use expiring within 30 days, nothing for healthy or odd agents', async () => {
    const items = await list();
    expect(byName(items)).toEqual({
      'fw-customer': ['certificate_expired'],
      'fw-disk': ['disk_full', 'disk_full'],
      'fw-fixture': ['updates_available', 'certificate_expiring'],
      'fw-many-certs': ['certificate_expiring'],
    });
    expect(items.find((i) => i.agent.name === 'fw-many-certs')!.reasons).toEqual([
      { kind: 'certificate_expiring', message: 'Certificate VPN "Zürich" \\ {Müller}, 東京 expires in 20 days', valid_to: '2027-01-10T00:00:00.000Z' },
    ]);
    expect(items.find((i) => i.agent.name === 'fw-disk')!.reasons).toEqual([
      { kind: 'disk_full', message: 'Disk / 94% full', mount: '/', used_percent: 94 },
      { kind: 'disk_full', message: 'Disk /var 95% full', mount: '/var', used_percent: 95 },
    ]);
    const fixture = items.find((i) => i.agent.name === 'fw-fixture')!;
    expect(fixture.agent).toMatchObject({ id: ids['fw-fixture'], status: 'online' });
    expect(fixture.reasons).toEqual([
      { kind: 'updates_available', message: '2 updates available', packages: 2 },
      { kind: 'certificate_expiring', message: 'Certificate cert-0 expires in 25 days', valid_to: '2027-01-15T00:00:00.000Z' },
    ]);
  });

  it('widens the certificate window on request and refuses a bad one', async () => {
    const items = await list(auth, '?certificate_days=200');
    expect(byName(items)['fw-customer']).toEqual(['certificate_expired', 'certificate_expiring']);
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/agents/attention?certificate_days=0', headers: auth }), 400, 'VALIDATION_ERROR');
  });

  it('moves the disk threshold on request and refuses a bad one', async () => {
    expect(byName(await list(auth, '?disk_percent=50'))['fw-disk']).toEqual(['disk_full', 'disk_full', 'disk_full']);
    expect(byName(await list(auth, '?disk_percent=95'))['fw-disk']).toEqual(['disk_full']);
    for (const bad of ['0', '101', '9.5', 'full']) {
      expectError(await t.app.inject({ method: 'GET', url: `/api/v1/agents/attention?disk_percent=${bad}`, headers: auth }), 400, 'VALIDATION_ERROR');
    }
  });

  it('adds stale and offline agents as their heartbeats age', async () => {
    clock.advance(3 * 60_000);
    expect(byName(await list())['fw-quiet']).toEqual(['stale']);
    clock.advance(3 * 60_000);
    const items = byName(await list());
    expect(items['fw-quiet']).toEqual(['offline']);
    expect(items['fw-odd']).toEqual(['offline']);
    expect(items['fw-fixture']).toEqual(['offline', 'updates_available', 'certificate_expiring']);
  });

  it('follows the latest heartbeat: updates installed and a certificate renewed take the agent off the list', async () => {
    const renewed = { ...firewall, updates: { available: false, packages: [] }, certificates: [{ name: 'cert-0', valid_to: '2027-12-01T00:00:00Z', in_use: true }] };
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: agentKeyHeaders, payload: { ...renewed, agent_id: ids['fw-fixture'], hostname: 'fw-fixture' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(byName(await list())['fw-fixture']).toBeUndefined();
  });

  it("shows a customer-scoped key only its customer's agents, and needs credentials", async () => {
    const items = await list(scopedRead);
    expect(items.map((i) => i.agent.name)).toEqual(['fw-customer']);
    expect(items[0]!.agent.customer_id).toBe(customerId);
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/agents/attention' }), 401, 'UNAUTHORIZED');
  });
});
