// The console with 10,000 agents (issue 29, item 5), in headless Chromium against the real server: the
// agents page shows one page of 100 sorted and filtered by the server, "Load more" follows the Link
// header, sorting and filters keep working from the URL, the fleet page's counts still cover every
// agent, and the audit log and an agent's events page the same way. How long the agents page takes to show its rows is reported, not asserted.
import { createHash } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvents } from '../../src/modules/agents/events.repo.js';
import { insertAuditEntries } from '../../src/modules/audit/audit.repo.js';
import { startConsole, type ConsoleRun } from '../helpers/console-run.js';
import { adminToken } from '../helpers/identity.js';
import type { LiveServer } from '../helpers/live-agent.js';
import { insertAgents, type BulkAgent } from '../helpers/paging.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/spawn-server.js';

const AGENTS = 10_000;
const PASSWORD = 'admin-password-1';

describe('the agents page with 10,000 agents', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let run: ConsoleRun;
  let server: LiveServer;
  let page: Page;
  let trouble: string[];
  let fleet: BulkAgent[];

  beforeAll(async () => {
    run = await startConsole({ viewport: { width: 1280, height: 800 } });
    ({ server, page, trouble } = run);
    await adminToken(server, 'admin', PASSWORD);
    const now = Date.now();
    // A third online, a third offline, the rest never seen.
    fleet = Array.from({ length: AGENTS }, (_, i) => ({
      id: createHash('md5').update(`console agent ${i}`).digest('hex'),
      name: `node-${String(i).padStart(5, '0')}`,
      hostname: `host-${String((i * 7919) % AGENTS).padStart(5, '0')}.example`,
      platform: (['freebsd', 'linux', 'windows'] as const)[Math.floor(i / 3) % 3]!,
      customer_id: null,
      agent_version: '1.4.0',
      last_heartbeat: i % 3 === 0 ? new Date(now) : i % 3 === 1 ? new Date(now - 3_600_000) : null,
    }));
    await insertAgents(server.db.db, fleet);
    await run.signInToFleet('admin', PASSWORD);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(() => run?.close());

  const firstCells = (column: 'name' | 'hostname') => page.getByTestId('agent-row').locator(`td[data-column="${column}"]`).allTextContents();
  const sortedBy = (key: (a: BulkAgent) => string) => [...fleet].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));

  it('keeps the fleet counts of every agent', async () => {
    const count = (status: string) => page.getByTestId(`count-${status}`).locator('strong').textContent();
    const seen = fleet.filter((a) => a.last_heartbeat !== null);
    const online = seen.filter((a) => a.last_heartbeat!.getTime() > Date.now() - 60_000).length;
    await expect.poll(() => count('online'), { timeout: 30_000 }).toBe(String(online));
    expect(await count('offline')).toBe(String(seen.length - online));
    expect(await count('unknown')).toBe(String(AGENTS - seen.length));
  });

  it('shows the first 100 agents by name, then 100 more with "Load more"', async () => {
    const started = performance.now();
    await page.goto(`${server.url}/agents`);
    await expect.poll(() => page.getByTestId('agent-row').count(), { timeout: 30_000, interval: 10 }).toBe(100);
    console.log(`agents page with ${AGENTS} agents: first 100 rows after ${Math.round(performance.now() - started)} ms`);
    expect(await firstCells('name')).toEqual(sortedBy((a) => a.name).slice(0, 100).map((a) => a.name));
    expect(await page.getByTestId('agents-shown').textContent()).toBe('(100+)');
    await page.getByTestId('load-more').click();
    await expect.poll(() => page.getByTestId('agent-row').count()).toBe(200);
    expect(await firstCells('name')).toEqual(sortedBy((a) => a.name).slice(0, 200).map((a) => a.name));
  });

  it('sorts on the server by the column clicked, both ways, with the filters in the URL', async () => {
    await page.getByRole('button', { name: /^Hostname/ }).click();
    const byHostname = sortedBy((a) => a.hostname).map((a) => a.hostname);
    await expect.poll(() => firstCells('hostname')).toEqual(byHostname.slice(0, 100));
    await page.getByRole('button', { name: /^Hostname/ }).click();
    await expect.poll(() => firstCells('hostname')).toEqual([...byHostname].reverse().slice(0, 100));
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toMatchObject({ sort: 'hostname', dir: 'desc' });

    await page.getByLabel('Status').selectOption('unknown');
    await page.getByLabel('Platform').selectOption('windows');
    const expected = fleet.filter((a) => a.last_heartbeat === null && a.platform === 'windows').sort((a, b) => (a.hostname < b.hostname ? 1 : -1));
    await expect.poll(() => firstCells('hostname')).toEqual(expected.slice(0, 100).map((a) => a.hostname));
    await page.getByTestId('load-more').click();
    await expect.poll(() => firstCells('hostname')).toEqual(expected.slice(0, 200).map((a) => a.hostname));
    await page.reload();
    await expect.poll(() => firstCells('hostname'), { timeout: 30_000 }).toEqual(expected.slice(0, 100).map((a) => a.hostname));
  });

  it("pages the audit log and an agent's events with \"Load more\" too", async () => {
    const at = (i: number) => new Date(Date.now() - (i + 1) * 60_000);
    await insertAuditEntries(
      server.db.db,
      Array.from({ length: 150 }, (_, i) => ({ time: at(i), actor_type: 'user' as const, actor: 'paging', action: 'test.paging', method: 'POST', path: `/api/v1/thing/${i}`, status_code: 200, ip: '127.0.0.1' })),
    );
    await page.goto(`${server.url}/audit?action=test.paging`);
    const paths = () => page.getByTestId('audit-row').locator('td:nth-child(4)').allTextContents();
    await expect.poll(paths, { timeout: 30_000 }).toHaveLength(100);
    await page.getByTestId('load-more').click();
    await expect.poll(paths).toEqual(Array.from({ length: 150 }, (_, i) => `POST /api/v1/thing/${i}`));
    expect(await page.getByTestId('load-more').count()).toBe(0);

    const agent = fleet[0]!;
    await insertEvents(server.db.db, Array.from({ length: 130 }, (_, i) => ({ agent_id: agent.id, type: i % 2 ? ('online' as const) : ('offline' as const), created_at: at(i) })));
    await page.goto(`${server.url}/agents/${agent.id}/events`);
    const rows = () => page.getByTestId('events-table').locator('tbody tr').count();
    await expect.poll(rows, { timeout: 30_000 }).toBe(100);
    await page.getByTestId('load-more').click();
    await expect.poll(rows).toBe(130);
  });

  it('met no page errors, CSP violations or dialogs', () => {
    expect(trouble).toEqual([]);
  });
});
