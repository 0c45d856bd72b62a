// Scripts, the command history and bulk actions in the console (issue 33, Builds 2 and 3) in headless
// Chromium against the real server and reference agents: an sh script with a parameter is saved in the
// library, run from an agent's Actions tab with another value than its default, and found after a
// reload in the agent's History tab with its output; a bulk command runs on a customer's three agents
// from the customer page, shows three "done" results and downloads as CSV; an agent that is not
// connected shows "waiting for agent" until its wait is cancelled. Screenshots of the new pages at
// 1280×800 and 390×844, none scrolling sideways.
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOT_DIR } from '../helpers/browser.js';
import { startConsole, type ConsoleRun } from '../helpers/console-run.js';
import { adminToken, bearer, createCustomer, createKey } from '../helpers/identity.js';
import type { LiveAgent, LiveServer } from '../helpers/live-agent.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/spawn-server.js';

const PASSWORD = 'admin-password-1';

describe('scripts, history and bulk actions in the console', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let run: ConsoleRun;
  let server: LiveServer;
  let page: Page;
  let trouble: string[];
  let customerId: number;
  let offlineCustomerId: number;
  let agents: LiveAgent[];
  let offlineId: string;
  const shots: Array<{ name: string; path: string }> = [];

  beforeAll(async () => {
    run = await startConsole();
    ({ server, page, trouble } = run);
    const token = await adminToken(server, 'admin', PASSWORD);
    customerId = (await createCustomer(server.app, token, '20001', 'Metzgerei Morgenrot')).id;
    offlineCustomerId = (await createCustomer(server.app, token, '20002', 'Zahnarzt Dr. Still')).id;
    // Keys scoped to a customer: agents registering with them belong to it.
    const key = (await createKey(server.app, bearer(token), 'agent', customerId)).key;
    const offlineKey = (await createKey(server.app, bearer(token), 'agent', offlineCustomerId)).key;
    agents = [];
    for (const name of ['morgenrot-pve-1', 'morgenrot-pve-2', 'morgenrot-pve-3']) agents.push(await server.startAgent(key, { name, hostname: `${name}.example` }));
    // Registered, never connected: a bulk action waits for it.
    offlineId = await server.register(offlineKey, 'still-pve-1');
    await run.signInToFleet('admin', PASSWORD);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(() => run?.close());

  it('saves an sh script with a parameter, runs it on an agent with another value, and finds it in the History tab after a reload', async () => {
    await page.getByRole('link', { name: 'Scripts', exact: true }).click();
    await page.getByRole('button', { name: 'New script' }).click();
    const form = page.getByRole('form', { name: 'New script' });
    await form.getByLabel('Name', { exact: true }).fill('Greet');
    await form.getByLabel('Description', { exact: true }).fill('Says hello in the language given');
    await form.getByLabel('Shell').selectOption('sh');
    await form.getByRole('button', { name: 'Add parameter' }).click();
    await form.getByLabel('Parameter name').fill('GREETING');
    await form.getByLabel('Default', { exact: true }).fill('hello');
    await form.getByLabel('Parameter description').fill('The word to greet with');
    await form.getByLabel('Script', { exact: true }).fill('echo "greeting: $GREETING"\necho "done" >&2');
    await form.getByRole('button', { name: 'Create script' }).click();
    const row = page.getByTestId('script-row').filter({ hasText: 'Greet' });
    await row.waitFor({ timeout: 15_000 });
    expect(await row.textContent()).toMatch(/sh.*Hypervisor.*GREETING = hello/);
    expect(await page.getByRole('form', { name: 'New script' }).count()).toBe(0);

    // A second script of the same name is refused (409), and the form keeps what was typed.
    await page.getByRole('button', { name: 'New script' }).click();
    await form.getByLabel('Name', { exact: true }).fill('greet');
    await form.getByLabel('Script', { exact: true }).fill('true');
    await form.getByRole('button', { name: 'Create script' }).click();
    await expect.poll(() => form.getByRole('alert').textContent(), { timeout: 15_000 }).toContain('A script of that name exists');
    expect(await form.getByLabel('Name', { exact: true }).inputValue()).toBe('greet');
    await form.getByRole('button', { name: 'Cancel' }).click();

    // Edited in place: the row shows the new description.
    await row.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Edit the script' });
    expect(await edit.getByLabel('Parameter name').inputValue()).toBe('GREETING');
    await edit.getByLabel('Description', { exact: true }).fill('Greets in the language given');
    await edit.getByRole('button', { name: 'Save script' }).click();
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain('Greets in the language given');
    expect(await edit.count()).toBe(0);

    const agent = agents[0]!;
    await page.goto(`${server.url}/agents/${agent.id}/actions`);
    const panel = page.getByRole('form', { name: 'Run a script' });
    await panel.getByLabel('Script', { exact: true }).selectOption({ label: 'Greet (sh)' });
    const value = panel.locator('input[name="param-GREETING"]');
    await expect.poll(() => value.inputValue()).toBe('hello');
    await value.fill('bonjour');
    await panel.getByRole('button', { name: 'Run script' }).click();
    await expect.poll(() => panel.getByTestId('script-stdout').textContent(), { timeout: 30_000 }).toBe('greeting: bonjour\n');
    expect(await panel.getByTestId('script-stderr').textContent()).toBe('done\n');
    expect(await panel.getByTestId('script-result').textContent()).toContain('Exit code 0');

    await page.reload();
    await page.getByRole('link', { name: 'History', exact: true }).click();
    await page.waitForURL(/\/agents\/[^/]+\/history$/);
    const entry = page.getByTestId('history-row').filter({ hasText: 'Greet' });
    await entry.waitFor({ timeout: 15_000 });
    expect(await entry.textContent()).toMatch(/Greet.*Script.*greeting: bonjour.*admin.*completed.*exit 0/);
    await entry.getByRole('button', { name: 'Output' }).click();
    await expect.poll(() => page.getByTestId('history-stdout').textContent(), { timeout: 15_000 }).toBe('greeting: bonjour\n');
    expect(await page.getByTestId('history-stderr').textContent()).toBe('done\n');
    shots.push({ name: 'agent-history', path: new URL(page.url()).pathname });

    // The fleet-wide history finds it by its output; the search goes into the URL.
    await page.getByRole('link', { name: 'Scripts', exact: true }).click();
    await page.getByRole('navigation', { name: 'Script sections' }).getByRole('link', { name: 'History' }).click();
    await page.getByLabel('Search').fill('bonjour');
    await page.waitForURL(/\/scripts\/history\?q=bonjour$/);
    await expect.poll(() => page.getByTestId('history-row').count(), { timeout: 15_000 }).toBe(1);
    expect(await page.getByTestId('history-row').textContent()).toContain('morgenrot-pve-1');
    await page.getByTestId('history-row').getByRole('link').first().click();
    await expect.poll(() => page.getByTestId('history-stdout').textContent(), { timeout: 15_000 }).toBe('greeting: bonjour\n');
  });

  it("runs a bulk command on a customer's three agents from its page, shows three done results and downloads them as CSV", async () => {
    await page.goto(`${server.url}/customers/${customerId}`);
    const form = page.getByRole('form', { name: 'Bulk action' });
    await form.getByLabel('Action').selectOption('exec');
    await form.getByLabel('Command').fill('echo "bulk $((6 * 7))"');
    await form.getByRole('button', { name: 'Start bulk action' }).click();
    await page.waitForURL(/\/bulk\/\d+$/);
    const rows = page.getByTestId('bulk-result-row');
    await expect.poll(() => rows.locator('[data-status="done"]').count(), { timeout: 30_000 }).toBe(3);
    expect((await rows.getByTestId('bulk-result-output').allTextContents()).sort()).toEqual(['bulk 42', 'bulk 42', 'bulk 42']);
    expect(await page.getByTestId('count-done').textContent()).toBe('3 done');
    await expect.poll(() => page.getByTestId('bulk-progress').textContent()).toBe('(finished)');
    expect(await page.getByTestId('bulk-title').textContent()).toBe('Run a command: echo "bulk $((6 * 7))"');
    expect(await page.getByText('all agents of Metzgerei Morgenrot').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Cancel waiting' }).count()).toBe(0);
    shots.push({ name: 'bulk-action', path: new URL(page.url()).pathname });

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^bulk-\d+-exec\.csv$/);
    const csv = await readFile(await download.path(), 'utf8');
    const lines = csv.trim().split(/\r?\n/);
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^agent,agent_id,status,exit_code/);
    for (const a of agents) expect(lines.find((l) => l.includes(a.id))).toMatch(/^morgenrot-pve-\d,[0-9a-f]+,done,0,/);

    // Each result links to its history entry.
    await rows.first().getByRole('link', { name: 'Output' }).click();
    await expect.poll(() => page.getByTestId('history-stdout').textContent(), { timeout: 15_000 }).toBe('bulk 42\n');

    // And the list on the Scripts page has it, with its counts.
    await page.goto(`${server.url}/scripts/bulk`);
    const listed = page.getByTestId('bulk-action-row').first();
    // The row names the customer once the customers' list has loaded too ("customer 1" until then).
    await expect
      .poll(() => listed.textContent(), { timeout: 15_000 })
      .toMatch(/Run a command: echo "bulk \$\(\(6 \* 7\)\)".*Metzgerei Morgenrot.*admin.*3 done/);
  });

  it('shows "waiting for agent" for an agent that is not connected, until the wait is cancelled', async () => {
    await page.goto(`${server.url}/customers/${offlineCustomerId}`);
    const form = page.getByRole('form', { name: 'Bulk action' });
    await form.getByLabel('Command').fill('uptime');
    await form.getByLabel('Wait for agents (hours)').fill('2');
    await form.getByRole('button', { name: 'Start bulk action' }).click();
    await page.waitForURL(/\/bulk\/\d+$/);
    const row = page.getByTestId('bulk-result-row').filter({ hasText: 'still-pve-1' });
    await expect.poll(() => row.getByTestId('result-status').textContent(), { timeout: 15_000 }).toBe('waiting for agent');
    expect(await row.getAttribute('data-agent-id')).toBe(offlineId);
    expect(await page.getByTestId('count-waiting').textContent()).toBe('1 waiting for agent');
    expect(await page.getByTestId('bulk-progress').textContent()).toBe('(refreshed every 2 s)');

    await page.getByRole('button', { name: 'Cancel waiting' }).click();
    await page.getByRole('button', { name: 'Yes, cancel waiting' }).click();
    await expect.poll(() => row.getByTestId('result-status').textContent(), { timeout: 15_000 }).toBe('cancelled');
    await expect.poll(() => page.getByTestId('bulk-progress').textContent()).toBe('(finished)');
  });

  it('takes screenshots of the Scripts tabs, a bulk action and an agent\'s History tab at 1280×800 and 390×844', async () => {
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    const pages = [{ name: 'scripts-library', path: '/scripts' }, { name: 'scripts-history', path: '/scripts/history' }, { name: 'scripts-bulk', path: '/scripts/bulk' }, ...shots];
    expect(pages.map((p) => p.name)).toEqual(['scripts-library', 'scripts-history', 'scripts-bulk', 'agent-history', 'bulk-action']);
    // Checked for sideways scrolling too, not shown in docs/console.md: the script form and the customer's bulk form.
    pages.push({ name: 'script-form', path: '/scripts?edit=new' }, { name: 'customer-bulk-form', path: `/customers/${customerId}` });
    for (const [width, height, size] of [[1280, 800, 'desktop'], [390, 844, 'mobile']] as const) {
      await page.setViewportSize({ width, height });
      for (const { name, path } of pages) {
        await page.goto(`${server.url}${path}`);
        await page.locator('main h1').first().waitFor();
        await expect.poll(() => page.getByText('Loading…').count(), { timeout: 15_000 }).toBe(0);
        if (name === 'scripts-library') await page.getByTestId('script-row').first().waitFor();
        if (name === 'script-form') await page.getByRole('form', { name: 'New script' }).getByRole('button', { name: 'Add parameter' }).click();
        if (name === 'customer-bulk-form') {
          await page.getByRole('form', { name: 'Bulk action' }).getByLabel('Action').selectOption('script');
          await page.getByRole('form', { name: 'Bulk action' }).getByLabel('Script', { exact: true }).selectOption({ label: 'Greet (sh; Hypervisor, Firewall)' });
          await page.getByRole('form', { name: 'Bulk action' }).scrollIntoViewIfNeeded();
        }
        // The agent's History tab with a run's output open, as a technician reads it.
        if (name === 'agent-history') {
          await page.getByTestId('history-row').filter({ hasText: 'Greet' }).getByRole('button', { name: 'Output' }).click();
          await page.getByTestId('history-stdout').waitFor();
        }
        // Usable at this width: the page itself never scrolls sideways (wide tables scroll in their box).
        expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), `${name} at ${width} px`).toBe(true);
        await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-${size}.png`) });
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('creates a group task that runs the script on every agent of a customer', async () => {
    await page.goto(`${server.url}/tasks`);
    const form = page.getByRole('form', { name: 'New task' });
    await form.getByLabel('For').selectOption('group');
    await form.getByLabel('Customer').selectOption(String(customerId));
    await form.getByLabel('Kind').selectOption('script');
    await form.getByLabel('Script', { exact: true }).selectOption({ index: 1 }); // Greet, the only script
    await form.getByLabel('GREETING').fill('servus');
    await form.getByRole('button', { name: 'Create task' }).click();
    await page.waitForURL(/\/tasks\/\d+$/);
    // The customer's name arrives with the customers list, after the task itself.
    await expect.poll(() => page.getByTestId('task-target').textContent()).toBe('Group: Metzgerei Morgenrot');
    const id = Number(new URL(page.url()).pathname.split('/').pop());
    const task = (await server.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}`, headers: bearer(await adminToken(server, 'admin', PASSWORD)) })).json() as Record<string, unknown>;
    expect(task).toMatchObject({ agent_id: null, target: { customer_id: customerId }, kind: 'script', params: { parameters: { GREETING: 'servus' } } });
  });

  it('deletes a script after asking; its runs stay in the history under its name', async () => {
    await page.goto(`${server.url}/scripts`);
    const row = page.getByTestId('script-row').filter({ hasText: 'Greet' });
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByRole('button', { name: 'Cancel' }).click();
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await expect.poll(() => row.count(), { timeout: 15_000 }).toBe(0);
    await page.getByText('No scripts yet.').waitFor();
    await page.getByRole('navigation', { name: 'Script sections' }).getByRole('link', { name: 'History' }).click();
    await page.getByLabel('Source').selectOption('script');
    await page.waitForURL(/\/scripts\/history\?source=script$/);
    await expect.poll(() => page.getByTestId('history-row').allTextContents(), { timeout: 15_000 }).toEqual([expect.stringContaining('Greet')]);
  });

  it('met no page errors, CSP violations or dialogs', () => {
    // The duplicate script name above is answered 409; the browser logs that failed request.
    expect(trouble.filter((t) => !/Failed to load resource: .*409/.test(t))).toEqual([]);
  });
});
