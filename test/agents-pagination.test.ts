// GET /agents over 10,000 agents (issue 29, item 5): `limit` and the `Link: <…>; rel="next"` cursor,
// every sort in both orders visiting each agent exactly once in the documented order, filters and the
// customer scope holding on every page, the full answer (no `limit`) equal to the pages joined, and
// bad `limit`/`cursor` values answered 400 with the contract's body.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { concatenatedBodies, insertAgents, nextLink, walkPages, type BulkAgent } from './helpers/paging.js';

const AGENTS = 10_000;
const PLATFORMS = ['freebsd', 'linux', 'windows', null] as const;
const SORTS = ['name', 'hostname', 'customer', 'platform', 'status', 'last_heartbeat', 'version'] as const;
/** Documented: offline < stale < unknown < online. */
const STATUS_RANK = { offline: 0, stale: 1, unknown: 2, online: 3 } as const;

interface ListedAgent { id: string; name: string; customer_id: number | null; status: keyof typeof STATUS_RANK; platform: string | null }

let t: TestApp;
let admin: Record<string, string>;
let clock: FakeClock;
const customers: Array<{ id: number; name: string }> = [];
let fleet: BulkAgent[];

const pad = (n: number) => String(n).padStart(5, '0');

beforeAll(async () => {
  clock = new FakeClock('2026-05-01T10:00:00Z');
  t = await buildTestApp({ clock });
  const token = await adminToken(t);
  admin = bearer(token);
  for (const [n, name] of ['Zulu Ltd', 'alpha GmbH', 'Mike AG'].entries()) customers.push(await createCustomer(t.app, token, String(8100 + n), name));
  const now = clock.now().getTime();
  fleet = Array.from({ length: AGENTS }, (_, i) => ({
    id: createHash('md5').update(`agent ${i}`).digest('hex'),
    // Every tenth name repeats another's (ties broken by id), some in capitals (sorting ignores case).
    name: `${i % 3 === 0 ? 'AGENT' : 'agent'}-${pad(i % 10 === 9 ? i - 1 : i)}`,
    hostname: `host-${pad((i * 7919) % AGENTS)}`,
    platform: PLATFORMS[i % 4]!,
    customer_id: i % 5 === 4 ? null : customers[i % 3]!.id,
    agent_version: i % 7 === 0 ? null : `1.${i % 4}.${i % 3}`,
    last_heartbeat: i % 11 === 0 ? null : new Date(now - [20_000, 3 * 60_000, 20 * 60_000][i % 3]! - (i % 13) * 1000),
  }));
  await insertAgents(t.db.db, fleet);
}, 120_000);
afterAll(() => t.close());

function statusOf(a: BulkAgent): keyof typeof STATUS_RANK {
  if (!a.last_heartbeat) return 'unknown';
  const age = clock.now().getTime() - a.last_heartbeat.getTime();
  return age < 120_000 ? 'online' : age <= 300_000 ? 'stale' : 'offline';
}

/** The documented order: the sort's key (case-insensitive text), then the name ignoring case, then the id. */
function keyOf(a: BulkAgent, sort: (typeof SORTS)[number]): Array<string | number> {
  const customer = customers.find((c) => c.id === a.customer_id)?.name ?? '';
  const first: Record<(typeof SORTS)[number], Array<string | number>> = {
    name: [],
    hostname: [a.hostname.toLowerCase()],
    customer: [customer.toLowerCase()],
    platform: [a.platform ?? ''],
    status: [STATUS_RANK[statusOf(a)]],
    last_heartbeat: [a.last_heartbeat ? 1 : 0, a.last_heartbeat?.getTime() ?? 0],
    version: [a.agent_version ?? ''],
  };
  return [...first[sort], a.name.toLowerCase(), a.id];
}

function expectedOrder(sort: (typeof SORTS)[number], order: 'asc' | 'desc', keep: (a: BulkAgent) => boolean = () => true): string[] {
  const compare = (x: BulkAgent, y: BulkAgent) => {
    const kx = keyOf(x, sort);
    const ky = keyOf(y, sort);
    for (let i = 0; i < kx.length; i++) if (kx[i] !== ky[i]) return kx[i]! < ky[i]! ? -1 : 1;
    return 0;
  };
  const sorted = fleet.filter(keep).sort(compare);
  return (order === 'desc' ? sorted.reverse() : sorted).map((a) => a.id);
}

const url = (query: string) => `/api/v1/agents${query ? `?${query}` : ''}`;

describe('GET /agents with limit and cursor', () => {
  it('limit=10 answers the first ten agents by name and a Link to the next page that keeps the query', async () => {
    const res = await t.app.inject({ method: 'GET', url: url('limit=10&platform=linux'), headers: admin });
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json() as ListedAgent[];
    expect(page.map((a) => a.id)).toEqual(expectedOrder('name', 'asc', (a) => a.platform === 'linux').slice(0, 10));
    const next = nextLink(res)!;
    expect(next).toMatch(/^\/api\/v1\/agents\?/);
    const params = new URL(next, 'http://x').searchParams;
    expect(params.get('limit')).toBe('10');
    expect(params.get('platform')).toBe('linux');
    expect(params.get('cursor')).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it.each(SORTS.flatMap((sort) => (['asc', 'desc'] as const).map((order) => [sort, order] as const)))(
    'sort=%s order=%s: following every Link visits each agent once, in the documented order',
    async (sort, order) => {
      const walk = await walkPages<ListedAgent>(t.app, url(`limit=1000&sort=${sort}&order=${order}`), admin);
      expect(walk.urls).toHaveLength(AGENTS / 1000);
      expect(walk.items.map((a) => a.id)).toEqual(expectedOrder(sort, order));
    },
    60_000,
  );

  it('filters hold on every page: customer, status, platform and search together with a sort', async () => {
    const customer = customers[1]!.id;
    const cases: Array<[string, (a: BulkAgent) => boolean, (typeof SORTS)[number], 'asc' | 'desc']> = [
      [`customer_id=${customer}`, (a) => a.customer_id === customer, 'hostname', 'asc'],
      ['status=online&platform=windows', (a) => statusOf(a) === 'online' && a.platform === 'windows', 'last_heartbeat', 'desc'],
      ['status=unknown', (a) => statusOf(a) === 'unknown', 'customer', 'asc'],
      ['q=host-0012', (a) => a.hostname.includes('host-0012') || a.name.toLowerCase().includes('host-0012'), 'name', 'desc'],
    ];
    for (const [filter, keep, sort, order] of cases) {
      const expected = expectedOrder(sort, order, keep);
      expect(expected.length, filter).toBeGreaterThan(0);
      const walk = await walkPages<ListedAgent>(t.app, url(`${filter}&sort=${sort}&order=${order}&limit=${Math.ceil(expected.length / 3)}`), admin);
      expect(walk.urls.length, filter).toBe(3);
      expect(walk.items.map((a) => a.id), filter).toEqual(expected);
    }
  });

  it('without limit answers all 10,000 agents, byte for byte the pages joined', async () => {
    for (const query of ['', 'sort=status&order=desc&platform=freebsd']) {
      const all = await t.app.inject({ method: 'GET', url: url(query), headers: admin });
      expect(all.statusCode).toBe(200);
      expect(all.headers['content-type']).toMatch(/^application\/json/);
      expect(all.headers.link).toBeUndefined();
      const pages = await walkPages(t.app, url(`${query}&limit=1000`), admin);
      expect(all.body).toBe(concatenatedBodies(pages.bodies));
      expect((JSON.parse(all.body) as unknown[]).length).toBe(query ? AGENTS / 4 : AGENTS);
    }
  });

  it('clamps a limit above 1000 and refuses a limit that is not a positive integer (400 with details)', async () => {
    const big = await t.app.inject({ method: 'GET', url: url('limit=50000'), headers: admin });
    expect((big.json() as unknown[]).length).toBe(1000);
    expect(nextLink(big)).toContain('limit=50000');
    for (const limit of ['0', '-3', '1.5', 'ten', '']) {
      const body = expectError(await t.app.inject({ method: 'GET', url: url(`limit=${limit}`), headers: admin }), 400, 'VALIDATION_ERROR');
      expect(body.details, limit).toEqual([expect.objectContaining({ path: 'limit' })]);
    }
  });

  it('refuses a malformed, tampered or foreign cursor with 400 and the contract body', async () => {
    const first = await t.app.inject({ method: 'GET', url: url('limit=5&sort=hostname'), headers: admin });
    const cursor = new URL(nextLink(first)!, 'http://x').searchParams.get('cursor')!;
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as Record<string, unknown>;
    const forged = (change: Record<string, unknown>) => Buffer.from(JSON.stringify({ ...decoded, ...change })).toString('base64url');
    const bad = [
      'not a cursor!',
      Buffer.from('{"broken json').toString('base64url'),
      Buffer.from('[1,2,3]').toString('base64url'),
      forged({ k: [42, 'x'] }),
      forged({ k: ['x', 'y', 'z', 'more', 'keys'] }),
      forged({ k: ['a\u0000b', 'agent', 'f'.repeat(32)] }),
      'A'.repeat(5000),
    ];
    for (const c of bad) {
      const body = expectError(await t.app.inject({ method: 'GET', url: url(`limit=5&sort=hostname&cursor=${encodeURIComponent(c)}`), headers: admin }), 400, 'VALIDATION_ERROR');
      expect(body.details, c.slice(0, 40)).toEqual([expect.objectContaining({ path: 'cursor' })]);
    }
    // The same cursor with another sort, order or filter belongs to another list: refused, not misread.
    for (const other of ['sort=name', 'sort=hostname&order=desc', 'sort=hostname&status=online']) {
      const body = expectError(await t.app.inject({ method: 'GET', url: url(`limit=5&${other}&cursor=${cursor}`), headers: admin }), 400, 'VALIDATION_ERROR');
      expect(body.error, other).toMatch(/cursor/);
    }
    // The same list with another page size is the same list.
    const again = await t.app.inject({ method: 'GET', url: url(`limit=7&sort=hostname&cursor=${cursor}`), headers: admin });
    expect((again.json() as ListedAgent[]).map((a) => a.id)).toEqual(expectedOrder('hostname', 'asc').slice(5, 12));
  });
});

describe('customer scope across pages', () => {
  it('a scoped key pages through its own agents only, even with a cursor taken from an unscoped list', async () => {
    const own = customers[2]!.id;
    const scoped = apiKey((await createKey(t.app, admin, 'read', own)).key);
    const walk = await walkPages<ListedAgent>(t.app, url('limit=500&sort=platform'), scoped);
    expect(walk.items.map((a) => a.id)).toEqual(expectedOrder('platform', 'asc', (a) => a.customer_id === own));
    // A position among other customers' agents: the scoped key still sees only its own after it.
    const unscoped = await t.app.inject({ method: 'GET', url: url('limit=3&sort=platform'), headers: admin });
    const res = await t.app.inject({ method: 'GET', url: nextLink(unscoped)!, headers: scoped });
    expect(res.statusCode).toBe(200);
    const seen = res.json() as ListedAgent[];
    expect(seen.length).toBe(3);
    expect(seen.every((a) => a.customer_id === own)).toBe(true);
    const customerList = await walkPages<ListedAgent>(t.app, `/api/v1/customers/${own}/agents?limit=700`, scoped);
    expect(customerList.items.map((a) => a.id)).toEqual(expectedOrder('name', 'asc', (a) => a.customer_id === own));
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/customers/${customers[0]!.id}/agents?limit=5`, headers: scoped })).statusCode).toBe(404);
  });
});
