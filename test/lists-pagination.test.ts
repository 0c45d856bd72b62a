// Every other list of the RMM server pages the same way (issue 29, item 5): `limit` plus the Link
// header's cursor, no item twice or missing, in the list's documented order; lists that answer "all"
// without `limit` still do, equal to their pages joined; lists with a default page size answer it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { FakeClock } from '../src/platform/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createCustomer, createKey, seedUser } from './helpers/identity.js';
import { expectPagesJoinToWhole, insertAgents, nextLink, walkPages } from './helpers/paging.js';

let t: TestApp;
let admin: Record<string, string>;
let clock: FakeClock;
let customerId: number;
let taskId: number;
const AGENT = 'a'.repeat(32);
const WINDOWS = ['b', 'c', 'd'].map((c) => c.repeat(32));

beforeAll(async () => {
  clock = new FakeClock('2026-05-01T10:00:00Z');
  t = await buildTestApp({ clock });
  const token = await adminToken(t);
  admin = bearer(token);
  for (const n of [5, 3, 9, 1, 7]) customerId = (await createCustomer(t.app, token, `90${n}`, `Customer ${n}`)).id;
  for (const name of ['zoe', 'Bob', 'carol', 'dave', 'Eve']) await seedUser(t, name, 'password-123');
  for (const p of ['read', 'write', 'agent'] as const) {
    await createKey(t.app, admin, p);
    await createKey(t.app, admin, p, customerId);
  }
  const old = new Date(clock.now().getTime() - 3_600_000);
  await insertAgents(t.db.db, [
    { id: AGENT, name: 'fw-main', hostname: 'fw', platform: 'freebsd', customer_id: customerId, agent_version: '1.0', last_heartbeat: old },
    ...WINDOWS.map((id, i) => ({ id, name: `pc-${i}`, hostname: `pc-${i}`, platform: 'windows' as const, customer_id: customerId, agent_version: '1.0', last_heartbeat: old })),
  ]);
  for (let i = 0; i < 5; i++) {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/tasks', headers: admin, payload: { agent_id: AGENT, kind: 'reboot', name: `task ${i}`, run_at: '2027-01-01T00:00:00Z' } });
    expect(res.statusCode, res.body).toBe(201);
    taskId = (res.json() as { id: number }).id;
  }
  const at = (minutes: number) => new Date(clock.now().getTime() - minutes * 60_000);
  // Oldest first, as they happen; two rows share a time in each: the id breaks the tie.
  await t.db.db.insertInto('task_runs').values([12, 9, 5, 5, 0].map((m) => ({ task_id: taskId, status: 'completed', started_at: at(m), finished_at: at(m) }))).execute();
  await t.db.db.insertInto('config_backups').values([12, 9, 5, 5, 0].map((m, i) => ({ agent_id: AGENT, hash: String(i).repeat(64), size: 3, content: `<${i}>`, created_at: at(m) }))).execute();
  for (const [version, platform] of [['1.9.0', 'linux'], ['1.10.0', 'linux'], ['2.0', 'freebsd'], ['1.2', 'windows'], ['1.0.1', 'linux']]) {
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/firmware/upload?version=${version}&platform=${platform}`, headers: { ...admin, 'content-type': 'application/octet-stream' }, payload: Buffer.from(`binary ${version}`) });
    expect(res.statusCode, res.body).toBe(201);
  }
  for (const id of ['Zeta.App', 'alpha.Tool', 'Mozilla.Firefox', 'Git.Git', '7zip.7zip']) {
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/customers/${customerId}/wau/rules`, headers: admin, payload: { action: 'allow', package_id: id, display_name: id } });
    expect(res.statusCode, res.body).toBe(201);
  }
  const software = ['Zoom', 'git', 'Git', '7-Zip', 'Firefox', 'Notepad++'].flatMap((name, n) =>
    WINDOWS.slice(0, 1 + (n % 3)).map((agent_id, v) => ({ agent_id, name, publisher: n === 2 ? 'Other' : 'Vendor', version: `${v}.${n}`, install_date: '' })),
  );
  await t.db.db.insertInto('agent_software').values(software).execute();
}, 60_000);
afterAll(() => t.close());

/** Pages of `limit` items of `/api/v1{path}` joined equal the list asked for with `unpagedQuery`. */
function expectPagesMatch(path: string, unpagedQuery: string, limit: number, headers = admin): Promise<Array<Record<string, unknown>>> {
  const sep = path.includes('?') ? '&' : '?';
  return expectPagesJoinToWhole(t.app, `/api/v1${path}${unpagedQuery ? sep + unpagedQuery : ''}`, `/api/v1${path}`, limit, headers);
}

describe('lists that answer everything without limit', () => {
  it.each([
    ['/customers', (r: Record<string, unknown>) => r.number],
    ['/users', (r: Record<string, unknown>) => String(r.username).toLowerCase()],
    ['/apikeys', (r: Record<string, unknown>) => r.id],
  ])('%s pages in its order and joins to the whole list', async (path, key) => {
    const all = await expectPagesMatch(path, '', 2);
    const keys = all.map(key) as Array<string | number>;
    expect(keys).toEqual([...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });

  it('customer lists: its API keys, its agents, its WAU rules (by package id) and its inventory (by name)', async () => {
    await expectPagesMatch(`/customers/${customerId}/apikeys`, '', 2);
    await expectPagesMatch(`/customers/${customerId}/agents`, '', 3);
    const rules = await expectPagesMatch(`/customers/${customerId}/wau/rules`, '', 2);
    expect(rules.map((r) => r.package_id)).toEqual(['7zip.7zip', 'Git.Git', 'Mozilla.Firefox', 'Zeta.App', 'alpha.Tool']);
    const inventory = await expectPagesMatch(`/customers/${customerId}/wau/inventory`, '', 2);
    expect(inventory.map((p) => `${String(p.name)}/${String(p.publisher)}`)).toEqual(['7-Zip/Vendor', 'Firefox/Vendor', 'Git/Other', 'git/Vendor', 'Notepad++/Vendor', 'Zoom/Vendor']);
    expect(inventory[0]).toMatchObject({ agent_count: 1, versions: [{ version: '0.3', agent_count: 1 }] });
  });

  it('firmware pages by platform, newest version first (numeric-aware)', async () => {
    const all = await expectPagesMatch('/firmware', '', 2);
    expect(all.map((f) => `${String(f.platform)} ${String(f.version)}`)).toEqual(['freebsd 2.0', 'linux 1.10.0', 'linux 1.9.0', 'linux 1.0.1', 'windows 1.2']);
    await expectPagesMatch('/firmware?platform=linux', '', 1);
  });

  it('the attention list pages by agent name', async () => {
    const all = await expectPagesMatch('/agents/attention', '', 2);
    expect(all.map((i) => (i.agent as { name: string }).name)).toEqual(['fw-main', 'pc-0', 'pc-1', 'pc-2']);
  });

  it('a scoped key pages only through what its customer may see', async () => {
    const scoped = apiKey((await createKey(t.app, admin, 'read', customerId)).key);
    const keys = await expectPagesMatch('/apikeys', '', 1, scoped);
    expect(keys.every((k) => k.customer_id === customerId)).toBe(true);
    const customers = await walkPages(t.app, '/api/v1/customers?limit=1', scoped);
    expect(customers.items.map((c) => c.id)).toEqual([customerId]);
  });
});

describe('lists with a default page size', () => {
  it('tasks: newest first, 100 by default, pages with the cursor', async () => {
    const all = await expectPagesMatch('/tasks', 'limit=1000', 2);
    expect(all.map((x) => x.id)).toEqual([...all.map((x) => x.id as number)].sort((a, b) => b - a));
  });

  it("a task's runs and an agent's backups: newest first, ties by id, paged", async () => {
    const runs = await expectPagesMatch(`/tasks/${taskId}/runs`, 'limit=1000', 2);
    expect(runs.map((r) => r.started_at)).toEqual([...runs.map((r) => r.started_at as string)].sort().reverse());
    expect(new Set(runs.map((r) => r.id)).size).toBe(5);
    const backups = await expectPagesMatch(`/agents/${AGENT}/backups`, 'limit=1000', 2);
    const order = backups.map((b) => `${String(b.created_at)} ${String(b.id).padStart(9, '0')}`);
    expect(order).toEqual([...order].sort().reverse());
    expect(new Set(backups.map((b) => b.id)).size).toBe(5);
  });

  it('backups answer 50 by default with a Link when there are more', async () => {
    const rows = Array.from({ length: 60 }, (_, i) => ({ agent_id: WINDOWS[0]!, hash: i.toString(16).padStart(64, 'e'), size: 1, content: 'x', created_at: clock.now() }));
    await t.db.db.insertInto('config_backups').values(rows).execute();
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/agents/${WINDOWS[0]}/backups`, headers: admin });
    expect((res.json() as unknown[]).length).toBe(50);
    const rest = await walkPages(t.app, nextLink(res)!, admin);
    expect(rest.items.length).toBe(10);
    await sql`delete from config_backups where agent_id = ${WINDOWS[0]!}`.execute(t.db.db);
  });
});
