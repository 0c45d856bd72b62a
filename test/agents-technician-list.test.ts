// The agents list for technicians (issue 33): names in natural order (srv-2 before srv-10) in every
// list of agents and on every page of a paged walk, both directions; the latest heartbeat's OS, primary
// IP, uptime, fullest disk, pending updates and reboot flag on each agent and as server-side sorts; and
// agent versions older than the newest firmware of their platform flagged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { fixtureText } from './helpers/fixtures.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { walkPages } from './helpers/paging.js';

interface Agent {
  id: string;
  name: string;
  platform: string | null;
  agent_version: string | null;
  version_outdated: boolean;
  [fact: string]: unknown;
}

let t: TestApp;
let admin: Record<string, string>;
let agentKey: Record<string, string>;
let customer: number;

/** Shuffled on purpose; case mixed (ignored); 'srv-007' equals srv-7 by number, so the id decides. */
const NAMES = ['srv-10', 'SRV-2', 'srv-100', 'srv-1', 'srv-20', 'srv-9', 'srv-11', 'Srv-99', 'srv-101', 'srv-1000', 'srv-3', 'srv-007', 'srv-7', 'srv-19', 'srv-a'];
const NATURAL = ['srv-1', 'SRV-2', 'srv-3', '7', '7', 'srv-9', 'srv-10', 'srv-11', 'srv-19', 'srv-20', 'Srv-99', 'srv-100', 'srv-101', 'srv-1000', 'srv-a'];

beforeAll(async () => {
  t = await buildTestApp();
  const token = await adminToken(t);
  admin = bearer(token);
  agentKey = apiKey((await createKey(t.app, admin, 'agent')).key);
  customer = (await createCustomer(t.app, token, '3303', 'Order GmbH')).id;
  for (const name of NAMES) await post('/agents', { name, customer_id: customer }, 201);
});
afterAll(() => t.close());

async function post(url: string, payload: object, status = 200, headers = admin) {
  const res = await t.app.inject({ method: 'POST', url: `/api/v1${url}`, headers, payload });
  expect(res.statusCode, `${url}: ${res.body}`).toBe(status);
  return res.json() as Record<string, unknown>;
}

async function list(query = ''): Promise<Agent[]> {
  return (await walkPages<Agent>(t.app, `/api/v1/agents?${query}`, admin)).items;
}

/** The names, with the two spellings of seven made comparable (their order between them is by id). */
const shown = (agents: Agent[]) => agents.map((a) => (/^srv-0*7$/.test(a.name) ? '7' : a.name));

describe('natural name order', () => {
  it('GET /agents: pages of 4 in both directions, the whole list, and a customer list all agree', async () => {
    const byName = await list(`customer_id=${customer}&limit=4`);
    expect(shown(byName)).toEqual(NATURAL);
    const sevens = byName.filter((a) => /^srv-0*7$/.test(a.name)).map((a) => a.id);
    expect(sevens).toEqual([...sevens].sort());
    expect(shown(await list(`customer_id=${customer}&limit=4&order=desc`))).toEqual([...NATURAL].reverse());
    expect(shown(await list(`customer_id=${customer}`))).toEqual(NATURAL);
    expect(shown((await walkPages<Agent>(t.app, `/api/v1/customers/${customer}/agents?limit=3`, admin)).items)).toEqual(NATURAL);
  });

  it('is the tie-break of the other sorts (all these agents share platform and status)', async () => {
    expect(shown(await list(`customer_id=${customer}&sort=platform&limit=5`))).toEqual(NATURAL);
    expect(shown(await list(`customer_id=${customer}&sort=status&limit=5`))).toEqual(NATURAL);
  });

  it('hostnames and versions sort naturally too', async () => {
    const versions = ['1.10.0', '1.9.2', '1.9.10', '2.0.0'];
    for (const [i, version] of versions.entries()) await register(`ver-${i}`, 'linux', { agent_version: version }, `host-${10 - i * 3}`);
    const byVersion = (await list('q=ver-&sort=version&limit=2')).map((a) => a.agent_version);
    expect(byVersion).toEqual(['1.9.2', '1.9.10', '1.10.0', '2.0.0']);
    expect((await list('q=ver-&sort=hostname&limit=3')).map((a) => a.name)).toEqual(['ver-3', 'ver-2', 'ver-1', 'ver-0']);
  });
});

/** Registers an agent and sends one heartbeat (the body given, with the agent's id and platform). */
async function register(name: string, platform: string, body: Record<string, unknown>, hostname = name): Promise<string> {
  const { agent_id } = (await post('/agent/register', { name, hostname, platform }, 200, agentKey)) as { agent_id: string };
  await post('/agent/heartbeat', { ...body, agent_id, platform }, 200, agentKey);
  return agent_id;
}

const fixture = (platform: string) => JSON.parse(fixtureText(`heartbeat-${platform}.json`)) as Record<string, unknown>;

describe("the latest heartbeat's facts", () => {
  let ids: Record<string, string>;

  beforeAll(async () => {
    ids = {
      fw: await register('facts-fw', 'freebsd', fixture('freebsd')),
      pve: await register('facts-pve', 'linux', fixture('linux')),
      win: await register('facts-win', 'windows', fixture('windows')),
      bare: await register('facts-bare', 'linux', {}),
      full: await register('facts-full', 'linux', { uptime_seconds: 60, disks: [{ mount: '/data', used_percent: 97.44 }], updates: { available: false, needs_reboot: true }, os: { name: 'Debian GNU/Linux', version: '12' } }),
    };
  });

  it('are on each agent, as the fixtures of all three platforms say', async () => {
    const byName = Object.fromEntries((await list('q=facts-')).map((a) => [a.name, a]));
    expect(byName['facts-fw']).toMatchObject({ os_name: 'OPNsense', os_version: '25.7.8', primary_ip: '10.92.65.27', uptime_seconds: 1234567, disk_used_percent: 5, disk_worst_mount: '/', pending_updates: 2, reboot_required: false });
    expect(byName['facts-pve']).toMatchObject({ os_name: 'Proxmox VE', primary_ip: '10.80.89.127', pending_updates: 1, reboot_required: true, disk_used_percent: 4.4 });
    expect(byName['facts-win']).toMatchObject({ os_name: 'Microsoft Windows 11 Pro', primary_ip: '10.1.0.57', pending_updates: 1, disk_worst_mount: 'C:', disk_used_percent: 35.7 });
    expect(byName['facts-bare']).toMatchObject({ os_name: null, primary_ip: null, uptime_seconds: null, disk_used_percent: null, pending_updates: null, reboot_required: null });
    expect(byName['facts-full']).toMatchObject({ pending_updates: 0, reboot_required: true, disk_used_percent: 97.4, disk_worst_mount: '/data' });
    expect(await (await t.app.inject({ method: 'GET', url: `/api/v1/agents/${ids.fw}`, headers: admin })).json()).toMatchObject({ primary_ip: '10.92.65.27' });
  });

  it('follow the latest heartbeat: a fact it no longer carries becomes unknown', async () => {
    await post('/agent/heartbeat', { agent_id: ids.full, platform: 'linux', uptime_seconds: 5 }, 200, agentKey);
    const agent = (await list('q=facts-full'))[0]!;
    expect(agent).toMatchObject({ uptime_seconds: 5, disk_used_percent: null, reboot_required: null, os_name: null });
    await post('/agent/heartbeat', { agent_id: ids.full, platform: 'linux', uptime_seconds: 60, disks: [{ mount: '/data', used_percent: 97.44 }], updates: { available: false, needs_reboot: true }, os: { name: 'Debian GNU/Linux', version: '12' } }, 200, agentKey);
  });

  it('sort on the server, a missing value first, both directions, paged', async () => {
    const order = async (sort: string, dir = 'asc') => (await list(`q=facts-&sort=${sort}&order=${dir}&limit=2`)).map((a) => a.name.slice(6));
    expect(await order('disk')).toEqual(['bare', 'pve', 'fw', 'win', 'full']);
    expect(await order('disk', 'desc')).toEqual(['full', 'win', 'fw', 'pve', 'bare']);
    // The three fixtures report the same uptime: the name decides.
    expect(await order('uptime')).toEqual(['bare', 'full', 'fw', 'pve', 'win']);
    expect(await order('updates')).toEqual(['bare', 'full', 'pve', 'win', 'fw']);
    expect(await order('reboot')).toEqual(['bare', 'fw', 'win', 'full', 'pve']);
    expect(await order('os')).toEqual(['bare', 'full', 'win', 'fw', 'pve']);
    expect(await order('ip')).toEqual(['bare', 'full', 'win', 'pve', 'fw']);
  });
});

describe('old agent versions', () => {
  it('are flagged when older (numeric-aware) than the newest firmware of their platform', async () => {
    for (const version of ['1.9.10', '1.10.0']) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/v1/firmware/upload?platform=linux&version=${version}`,
        headers: { ...admin, 'content-type': 'application/octet-stream' },
        payload: Buffer.from(`binary ${version}`),
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    const flags = Object.fromEntries((await list('q=ver-')).map((a) => [a.agent_version, a.version_outdated]));
    expect(flags).toEqual({ '1.9.2': true, '1.9.10': true, '1.10.0': false, '2.0.0': false });
    // No firmware for Windows: nothing to be behind.
    expect((await list('q=facts-win'))[0]).toMatchObject({ version_outdated: false });
    const one = (await (await t.app.inject({ method: 'GET', url: `/api/v1/agents/${(await list('q=ver-2'))[0]!.id}`, headers: admin })).json()) as Agent;
    expect(one).toMatchObject({ agent_version: '1.9.10', version_outdated: true });
  });
});
