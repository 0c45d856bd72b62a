// The agents list for technicians in headless Chromium against the real server (issue 33, acceptance:
// "tags filter the list; CSV export matches the view; delete and move an agent"): the technician's
// columns from real heartbeats, names in natural order (srv-2 before srv-10, here and on the firmware
// page), the tag filter in the URL, tags and a note edited on the agent page, a CSV of every page of the
// filtered, sorted list that holds exactly the table's rows (RFC 4180 quoting, formulas defused), an
// agent moved between customers and deleted, and the list still usable on a phone. Issue 57: a column
// chooser remembered in the browser shows what 1366 px hides, and the search finds IPs and customers.
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, BLOCKING, describeViolations } from '../helpers/axe.js';
import { startConsole, type ConsoleRun } from '../helpers/console-run.js';
import { fixtureText } from '../helpers/fixtures.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from '../helpers/identity.js';
import type { LiveServer } from '../helpers/live-agent.js';
import { insertAgents } from '../helpers/paging.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/spawn-server.js';

const PASSWORD = 'admin-password-1';
const EVIL = '=HYPERLINK("http://evil.example","x")';

/** The little of the DOM these tests read inside the page (the test project has no DOM types). */
interface RowLike {
  cells: ArrayLike<{ className: string; textContent: string | null; querySelector(selector: string): { dateTime?: string } | null }>;
}

/** RFC 4180 records (quoted fields may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (c === '"') {
      quoted = !quoted;
    } else if (!quoted && c === ',') {
      row.push(field);
      field = '';
    } else if (!quoted && c === '\r' && text[i + 1] === '\n') {
      rows.push([...row, field]);
      row = [];
      field = '';
      i++;
    } else {
      field += c;
    }
  }
  return rows;
}

describe('the agents list for technicians', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let run: ConsoleRun;
  let server: LiveServer;
  let page: Page;
  let trouble: string[];
  let admin: Record<string, string>;
  let alpha: { id: number; name: string };
  let beta: { id: number; name: string };
  const ids: Record<string, string> = {};

  const api = async (method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: object, headers = admin) => {
    const res = await server.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
    return res.json() as Record<string, unknown>;
  };
  const fixture = (platform: string) => JSON.parse(fixtureText(`heartbeat-${platform}.json`)) as Record<string, unknown>;
  const cellTexts = () =>
    page.getByTestId('agent-row').evaluateAll((rows) =>
      // The selection checkbox is not a column of the view (nor of the CSV).
      rows.map((tr) => Array.from((tr as unknown as RowLike).cells).filter((td) => td.className !== 'select').map((td) => td.querySelector('time')?.dateTime ?? td.textContent ?? '')),
    );
  const names = async () => (await cellTexts()).map((r) => r[0]);

  beforeAll(async () => {
    run = await startConsole({ viewport: { width: 1600, height: 900 } });
    ({ server, page, trouble } = run);
    const token = await adminToken(server, 'admin', PASSWORD);
    admin = bearer(token);
    alpha = await createCustomer(server.app, token, '20001', 'Müller, Schmidt & "Partner"');
    beta = await createCustomer(server.app, token, '20002', 'Beta AG');
    const key = apiKey((await createKey(server.app, admin, 'agent')).key);
    const agents: Array<[string, string, Record<string, unknown>]> = [
      ['srv-10', 'linux', fixture('linux')],
      ['srv-2', 'freebsd', fixture('freebsd')],
      ['srv-1', 'windows', fixture('windows')],
      [EVIL, 'linux', { os: { name: '@SUM(1+1)' }, disks: [{ mount: '/data', used_percent: 96 }] }],
      ['srv-100', 'linux', {}],
    ];
    for (const [name, platform, body] of agents) {
      const { agent_id } = (await api('POST', '/agent/register', { name, hostname: `${name.slice(0, 6)}.example`, platform, agent_version: '1.4.2' }, key)) as { agent_id: string };
      await api('POST', '/agent/heartbeat', { ...body, agent_id, platform, agent_version: '1.4.2' }, key);
      await api('PUT', `/agents/${agent_id}/customer`, { customer_id: alpha.id });
      ids[name] = agent_id;
    }
    for (const name of ['srv-10', 'srv-2', EVIL]) await api('PATCH', `/agents/${ids[name]}`, { tags: ['VIP', 'rack-1'] });
    // Newer firmware for Linux: the Linux agents' 1.4.2 is old.
    const upload = await server.app.inject({ method: 'POST', url: '/api/v1/firmware/upload?platform=linux&version=1.10.0', headers: { ...admin, 'content-type': 'application/octet-stream' }, payload: Buffer.from('fw') });
    expect(upload.statusCode, upload.body).toBe(201);
    // More agents than a page of the console (100), so the export must follow the pages.
    await insertAgents(
      server.db.db,
      Array.from({ length: 120 }, (_, i) => ({ id: `bb${String(i).padStart(30, '0')}`, name: `bulk-${i}`, hostname: `bulk-${i}`, platform: 'windows' as const, customer_id: beta.id, agent_version: '1.0.0', last_heartbeat: null })),
    );
    await run.signInToFleet('admin', PASSWORD);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(() => run?.close());

  it("shows the technician's columns, names in natural order", async () => {
    await page.goto(`${server.url}/agents?customer=${alpha.id}`);
    await expect.poll(names, { timeout: 20_000 }).toEqual([EVIL, 'srv-1', 'srv-2', 'srv-10', 'srv-100']);
    const row = (await cellTexts())[2]!;
    expect(row).toEqual(['srv-2', 'fw-kunde1.example.lan', alpha.name, 'Firewall', 'online', expect.stringMatching(/Z$/), 'OPNsense 25.7.8', '10.92.65.27', '14 d 6 h', '5.0 % /', '2', 'no', '1.4.2', 'VIP, rack-1']);
    expect((await cellTexts())[3]).toEqual(expect.arrayContaining(['Proxmox VE 9.1.1', '10.80.89.127', 'needed', '1.4.2 old']));
    // The firmware page's agents too: natural order, 100 at a time (the srv- agents come after the 120 bulk- ones).
    await page.goto(`${server.url}/firmware`);
    await page.getByTestId('firmware-agent-row').first().waitFor();
    expect(await page.getByTestId('firmware-agent-row').count()).toBe(100);
    await page.getByTestId('load-more').click();
    const firmwareNames = () => page.getByTestId('firmware-agent-row').evaluateAll((rows) => rows.map((r) => (r as unknown as RowLike).cells[0]?.textContent));
    await expect.poll(async () => (await firmwareNames()).filter((n) => n?.startsWith('srv-')), { timeout: 20_000 }).toEqual(['srv-1', 'srv-2', 'srv-10', 'srv-100']);
  });

  it('filters by tag from a select kept in the URL', async () => {
    await page.goto(`${server.url}/agents`);
    await page.getByLabel('Tag').selectOption('VIP');
    await expect.poll(names).toEqual([EVIL, 'srv-2', 'srv-10']);
    expect(new URL(page.url()).searchParams.get('tag')).toBe('VIP');
    await page.reload();
    await expect.poll(names, { timeout: 20_000 }).toEqual([EVIL, 'srv-2', 'srv-10']);
    await page.getByLabel('Tag').selectOption('');
    await expect.poll(async () => (await names()).length).toBe(100);
  });

  async function exportCsv(): Promise<string[][]> {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-csv').click()]);
    expect(download.suggestedFilename()).toMatch(/^agents-\d{4}-\d{2}-\d{2}\.csv$/);
    const text = await readFile((await download.path())!, 'utf8');
    expect(text.startsWith('\ufeff')).toBe(true);
    expect(text.endsWith('\r\n')).toBe(true);
    return parseCsv(text.slice(1));
  }

  it('exports the filtered, sorted view as CSV: the same rows and cells, quoted, formulas defused', async () => {
    await page.goto(`${server.url}/agents?tag=vip&sort=disk&dir=desc`);
    await expect.poll(names, { timeout: 20_000 }).toEqual([EVIL, 'srv-2', 'srv-10']);
    const [header, ...rows] = await exportCsv();
    const headings = await page.locator('[data-testid="agents-table"] thead th:not(.select)').allTextContents();
    expect(header).toEqual(headings.map((h) => h.replace(/ [▲▼]$/, '')));
    const table = await cellTexts();
    // A cell a spreadsheet would run as a formula starts with a quote in the file; nothing else differs.
    expect(rows[0]![0]).toBe(`'${EVIL}`);
    expect(rows[0]![6]).toBe("'@SUM(1+1)");
    const defused = table.map((r) => r.map((cell) => (/^[=+\-@]/.test(cell) ? `'${cell}` : cell)));
    expect(rows).toEqual(defused);
    expect(rows[1]![2]).toBe('Müller, Schmidt & "Partner"');
  });

  it('exports every page of the list, not only the rows loaded', async () => {
    await page.goto(`${server.url}/agents`);
    await expect.poll(async () => (await names()).length, { timeout: 20_000 }).toBe(100);
    const [, ...rows] = await exportCsv();
    expect(rows).toHaveLength(125);
    await page.getByTestId('load-more').click();
    await expect.poll(async () => (await names()).length).toBe(125);
    const table = (await cellTexts()).map((r) => r.map((cell) => (/^[=+\-@]/.test(cell) ? `'${cell}` : cell)));
    expect(rows).toEqual(table);
  });

  it('edits tags and the note on the agent page', async () => {
    await page.goto(`${server.url}/agents/${ids['srv-1']}/overview`);
    await page.getByRole('button', { name: 'Edit tags and note' }).click();
    await page.getByLabel('Tags (comma-separated)').fill('backup-nas, Standort Nord');
    await page.getByLabel('Note', { exact: true }).fill('Schlüssel beim Empfang, Tel. 0123');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByTestId('agent-tags').textContent()).toBe('backup-nasStandort Nord');
    expect(await page.getByTestId('agent-note').textContent()).toBe('Schlüssel beim Empfang, Tel. 0123');
    expect(await api('GET', `/agents/${ids['srv-1']}`)).toMatchObject({ tags: ['backup-nas', 'Standort Nord'], note: 'Schlüssel beim Empfang, Tel. 0123' });
    // A tag that breaks the rules: the server's words, nothing saved.
    await page.getByRole('button', { name: 'Edit tags and note' }).click();
    await page.getByLabel('Tags (comma-separated)').fill('a, A');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').waitFor();
    // Chromium logs the 400 answer itself; expected here, so it is not counted as trouble at the end.
    await expect.poll(() => trouble.findIndex((t) => t.includes('status of 400'))).toBeGreaterThanOrEqual(0);
    trouble.splice(trouble.findIndex((t) => t.includes('status of 400')), 1);
    expect(await api('GET', `/agents/${ids['srv-1']}`)).toMatchObject({ tags: ['backup-nas', 'Standort Nord'] });
  });

  it('moves an agent to another customer and to none, then deletes it after asking', async () => {
    const id = ids['srv-100']!;
    await page.goto(`${server.url}/agents/${id}/actions`);
    await page.locator('select[name="move-customer"]').selectOption(String(beta.id));
    await page.getByRole('button', { name: 'Move' }).click();
    await expect.poll(async () => (await api('GET', `/agents/${id}`)).customer_id).toBe(beta.id);
    // The page has reloaded the agent once Move is disabled again (its choice is the current customer);
    // choosing before that raced the reload, which then reset the choice.
    await expect.poll(() => page.getByRole('button', { name: 'Move' }).isDisabled(), { timeout: 15_000 }).toBe(true);
    await page.locator('select[name="move-customer"]').selectOption('');
    await page.getByRole('button', { name: 'Move' }).click();
    await expect.poll(async () => (await api('GET', `/agents/${id}`)).customer_id).toBe(null);

    await page.getByRole('button', { name: 'Delete agent' }).click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect((await server.app.inject({ method: 'GET', url: `/api/v1/agents/${id}`, headers: admin })).statusCode).toBe(200);
    await page.getByRole('button', { name: 'Delete agent' }).click();
    await page.getByRole('button', { name: 'Yes, delete agent' }).click();
    await page.waitForURL(`${server.url}/agents`);
    expect((await server.app.inject({ method: 'GET', url: `/api/v1/agents/${id}`, headers: admin })).statusCode).toBe(404);
    await expect.poll(async () => (await names()).includes('srv-100'), { timeout: 20_000 }).toBe(false);
  });

  it('runs a bulk action on agents picked with checkboxes, or on every agent the filter matches', async () => {
    type Bulk = { target: Record<string, unknown>; results: Array<{ agent_name: string; status: string }> };
    const latestBulk = async () => {
      const [first] = (await api('GET', '/bulk-actions?limit=1')) as unknown as Array<{ id: number }>;
      return (await api('GET', `/bulk-actions/${first!.id}`)) as unknown as Bulk;
    };
    await page.goto(`${server.url}/agents?customer=${alpha.id}`);
    await expect.poll(names, { timeout: 20_000 }).toEqual([EVIL, 'srv-1', 'srv-2', 'srv-10']);
    await page.getByLabel('Select srv-2').check();
    await page.getByLabel('Select srv-10').check();
    expect(await page.getByTestId('selection-count').textContent()).toBe('2 selected');
    await page.getByRole('button', { name: 'Run an action…' }).click();
    await page.getByLabel('Action', { exact: true }).selectOption('request_update');
    await page.getByRole('button', { name: 'Start bulk action' }).click();
    await page.waitForURL(/\/bulk\/\d+$/);
    await expect.poll(async () => (await latestBulk()).results.map((r) => `${r.agent_name} ${r.status}`).sort()).toEqual(['srv-10 done', 'srv-2 done']);
    expect((await latestBulk()).target).toEqual({ agent_ids: [ids['srv-2'], ids['srv-10']] });

    // "All matching the filter" sends the filter, not the loaded rows: the server resolves it.
    await page.goto(`${server.url}/agents?tag=vip`);
    await expect.poll(names, { timeout: 20_000 }).toEqual([EVIL, 'srv-2', 'srv-10']);
    await page.getByLabel('Select srv-2').check();
    await page.getByRole('button', { name: /^Select all matching the filter/ }).click();
    expect(await page.getByTestId('selection-count').textContent()).toBe('All matching (3)');
    await page.getByRole('button', { name: 'Run an action…' }).click();
    await page.getByLabel('Action', { exact: true }).selectOption('request_update');
    await page.getByRole('button', { name: 'Start bulk action' }).click();
    await page.waitForURL(/\/bulk\/\d+$/);
    await expect.poll(async () => (await latestBulk()).results.length).toBe(3);
    expect((await latestBulk()).target).toEqual({ tag: 'vip' });
    // A changed filter drops the selection.
    await page.goto(`${server.url}/agents?tag=vip`);
    await page.getByLabel('Select srv-2').check();
    await page.getByLabel('Tag').selectOption('');
    await expect.poll(() => page.getByTestId('selection-bar').count()).toBe(0);
  });

  it('shows hidden columns at 1366 px from a column chooser remembered in the browser, and finds agents by IP or customer (issue 57)', async () => {
    await page.setViewportSize({ width: 1366, height: 768 });
    await page.goto(`${server.url}/agents?customer=${alpha.id}`);
    await expect.poll(names, { timeout: 20_000 }).toEqual([EVIL, 'srv-1', 'srv-2', 'srv-10']);
    const headings = async () => (await page.locator('[data-testid="agents-table"] thead th:not(.select)').allTextContents()).map((h) => h.replace(/ [▲▼]$/, ''));
    const laptop = ['Name', 'Hostname', 'Customer', 'Status', 'Last heartbeat', 'OS', 'Disk used', 'Updates', 'Reboot', 'Agent version', 'Tags'];
    expect(await headings()).toEqual(laptop);

    const button = page.getByRole('button', { name: 'Columns' });
    expect(await button.getAttribute('aria-expanded')).toBe('false');
    await button.click();
    const panel = page.getByRole('group', { name: 'Columns shown' });
    expect(await panel.getByLabel('Name', { exact: true }).isDisabled()).toBe(true);
    expect(await panel.getByLabel('Platform').isChecked()).toBe(false);
    expect(describeViolations(await axeViolations(page, BLOCKING))).toEqual([]);
    await panel.getByLabel('Platform').check();
    await panel.getByLabel('Primary IP').check();
    await panel.getByLabel('Uptime').check();
    await panel.getByLabel('Tags').uncheck();
    const chosen = ['Name', 'Hostname', 'Customer', 'Platform', 'Status', 'Last heartbeat', 'OS', 'Primary IP', 'Uptime', 'Disk used', 'Updates', 'Reboot', 'Agent version'];
    expect(await headings()).toEqual(chosen);
    const srv2 = page.getByTestId('agent-row').filter({ hasText: 'srv-2' });
    expect(await srv2.locator('td[data-column="ip"]').textContent()).toBe('10.92.65.27');
    expect(await srv2.locator('td[data-column="uptime"]').textContent()).toBe('14 d 6 h');
    // Escape closes the panel and leaves the keyboard on the button.
    await panel.getByLabel('Uptime').press('Escape');
    expect(await panel.count()).toBe(0);
    expect(await button.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);

    // Remembered in the browser: after a reload.
    await page.reload();
    await expect.poll(headings, { timeout: 20_000 }).toEqual(chosen);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    // The search matches the primary IP and the customer's name, on the server.
    await page.getByLabel('Search').fill('10.92.65');
    await expect.poll(names).toEqual(['srv-2']);
    await page.getByLabel('Search').fill('schmidt & "partner');
    await expect.poll(names).toEqual([EVIL, 'srv-1', 'srv-2', 'srv-10']);
    await page.getByLabel('Search').fill('');

    // A choice holds at every width: the phone shows the IP and uptime chosen, and not the tags.
    await page.setViewportSize({ width: 390, height: 844 });
    await expect.poll(headings).toEqual(['Name', 'Platform', 'Status', 'Primary IP', 'Uptime', 'Disk used']);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    await page.setViewportSize({ width: 1366, height: 768 });
    await page.getByRole('button', { name: 'Columns' }).click();
    await page.getByRole('button', { name: 'Default columns' }).click();
    await expect.poll(headings).toEqual(laptop);
    expect(await page.evaluate('localStorage.length')).toBe(0);
  });

  it('keeps name, status and disk on a phone, without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.url}/agents?customer=${alpha.id}`);
    await expect.poll(names, { timeout: 20_000 }).toEqual([EVIL, 'srv-1', 'srv-2', 'srv-10']);
    const visible = await page.locator('[data-testid="agents-table"] thead th:visible:not(.select)').allTextContents();
    expect(visible.map((h) => h.replace(/ [▲▼]$/, ''))).toEqual(['Name', 'Status', 'Disk used']);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
  });

  it('met no page errors, CSP violations or dialogs', () => {
    expect(trouble).toEqual([]);
  });
});
