// Issue 33, Build 5 and Build 6 in headless Chromium against the real server: the fleet page ranks what
// needs attention by severity (offline, stale, certificates, disks, then updates as one count line), the
// audit log names each change's object and shows its details as "key: value", task and command results
// are readable (exit code, duration, output; updates as a table; no JSON), and a recurring task can be
// edited. Saves docs/console.md's screenshots of these pages at 1280×800 and 390×844.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOT_DIR } from '../helpers/browser.js';
import { startConsole, type ConsoleRun } from '../helpers/console-run.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from '../helpers/identity.js';
import type { LiveAgent, LiveServer } from '../helpers/live-agent.js';
import { ShiftedClock } from '../helpers/shifted-clock.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/spawn-server.js';

const PASSWORD = 'admin-password-1';
const SIZES = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'mobile', width: 390, height: 844 },
] as const;

describe('console defects of issue 33', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  const clock = new ShiftedClock();
  let run: ConsoleRun;
  let server: LiveServer;
  let page: Page;
  let trouble: string[];
  let token: string;
  let live: LiveAgent;
  let taskId: number;

  beforeAll(async () => {
    run = await startConsole({ server: { clock, backgroundJobs: true }, viewport: SIZES[0] });
    ({ server, page, trouble } = run);
    token = await adminToken(server, 'admin', PASSWORD);
    const customer = await createCustomer(server.app, token, '10001', 'Bäckerei Sonnenschein GmbH');
    const agentKey = (await createKey(server.app, bearer(token), 'agent')).key;
    const key = apiKey(agentKey);
    // One agent per severity, named so that by name alone the order would be the opposite.
    const soon = new Date(Date.now() + 5 * 86_400_000).toISOString();
    const fleet: Array<[string, number, Record<string, unknown>]> = [
      ['a-updates-1', 0, { updates: { available: true, packages: [{ name: 'openssl' }, { name: 'curl' }] } }],
      ['a-updates-2', 0, { updates: { available: true, packages: [{ name: 'bash' }] } }],
      ['b-disk', 0, { disks: [{ mount: '/var', used_percent: 96 }] }],
      ['c-cert', 0, { certificates: [{ name: 'web-gui', valid_to: soon, in_use: true }] }],
      ['d-stale', -3 * 60_000, {}],
      ['e-offline', -10 * 60_000, { updates: { available: true, packages: [{ name: 'zlib' }] } }],
    ];
    for (const [name, offset, system] of fleet) {
      const reg = await server.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: key, payload: { hostname: name, name, platform: 'linux' } });
      expect(reg.statusCode, reg.body).toBe(200);
      clock.offsetMs = offset;
      const beat = await server.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: key, payload: { ...system, agent_id: reg.json().agent_id, hostname: name, platform: 'linux' } });
      expect(beat.statusCode, beat.body).toBe(200);
    }
    clock.offsetMs = 0;
    live = await server.startAgent(agentKey, { name: 'demo-3', hostname: 'demo-3', platform: 'freebsd' });
    const assigned = await server.app.inject({ method: 'PUT', url: `/api/v1/agents/${live.id}/customer`, headers: bearer(token), payload: { customer_id: customer.id } });
    expect(assigned.statusCode, assigned.body).toBe(200);
    const task = await server.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      headers: bearer(token),
      payload: { agent_id: live.id, kind: 'exec', params: { command: 'echo issue-33-output' }, cron: '0 3 * * *', name: 'Nightly check' },
    });
    expect(task.statusCode, task.body).toBe(201);
    taskId = task.json().id;
    await run.signInToFleet('admin', PASSWORD);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(() => run?.close());

  it('ranks the fleet by severity, each in its colour, with updates as one count line', async () => {
    await page.goto(`${server.url}/`);
    const rows = page.getByTestId('attention').locator('tbody tr');
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(4);
    expect(await rows.evaluateAll((trs) => trs.map((tr) => [tr.querySelector('a')?.textContent, tr.getAttribute('data-severity')]))).toEqual([
      ['e-offline', 'offline'],
      ['d-stale', 'stale'],
      ['c-cert', 'certificate'],
      ['b-disk', 'disk'],
    ]);
    // Each group its own colour.
    // (This project's TypeScript has no DOM types outside web/, hence the cast.)
    type Styled = { getComputedStyle(el: unknown): { borderLeftColor: string } };
    const colours = await rows.evaluateAll((trs) => trs.map((tr) => (globalThis as unknown as Styled).getComputedStyle(tr.querySelector('td')).borderLeftColor));
    expect(new Set(colours).size).toBe(4);
    // The offline agent's updates are listed with it, after its more severe reason.
    expect(await rows.first().locator('.reasons .badge').allTextContents()).toEqual(['No heartbeat for more than 5 minutes', '1 update available']);
    const updates = page.getByTestId('attention-updates');
    // The two above and demo-3, whose simulated firewall reports updates of its own.
    expect((await updates.locator('summary').textContent())?.replace(/\s+/g, ' ')).toMatch(/Updates available on 3 agents \((\d+) packages\)/);
    expect(await updates.getByTestId('attention-updates-table').isVisible()).toBe(false);
    await updates.locator('summary').click();
    expect(await updates.getByTestId('attention-updates-table').locator('tbody tr a').allTextContents()).toEqual(['a-updates-1', 'a-updates-2', 'demo-3']);
    expect(await page.getByTestId('severity-disk').textContent()).toBe('1 disks nearly full');
  });

  it('runs a task and shows its result readably: exit code, duration, output; no JSON', async () => {
    const ran = await server.app.inject({ method: 'POST', url: `/api/v1/tasks/${taskId}/run`, headers: bearer(token) });
    expect(ran.statusCode, ran.body).toBe(200);
    await page.goto(`${server.url}/tasks/${taskId}`);
    const result = page.getByTestId('task-run-row').first().getByTestId('result-view');
    await expect.poll(() => result.count(), { timeout: 30_000 }).toBe(1);
    expect(await result.getByTestId('result-exit-code').textContent()).toBe('0');
    expect(await result.getByTestId('result-stdout').textContent()).toBe('issue-33-output\n');
    expect(await result.textContent()).toMatch(/Duration:\s*\d/);
    expect(await result.textContent()).not.toMatch(/[{}"]/);
  });

  it('edits a recurring task: name, cron, command and webhook', async () => {
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = page.getByRole('form', { name: 'Edit task' });
    await form.getByLabel('Name').fill('Evening check');
    await form.getByLabel('Cron expression').fill('30 18 * * 1-5');
    await form.getByLabel('Command').fill('echo edited');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: 'Evening check' }).waitFor();
    expect(await page.getByTestId('task-facts').textContent()).toContain('30 18 * * 1-5');
    const stored = (await server.app.inject({ method: 'GET', url: `/api/v1/tasks/${taskId}`, headers: bearer(token) })).json();
    expect(stored).toMatchObject({ name: 'Evening check', cron: '30 18 * * 1-5', params: { command: 'echo edited' }, webhook_url: null, status: 'scheduled' });
  });

  it('shows an update check as a table, not JSON', async () => {
    await page.goto(`${server.url}/agents/${live.id}/actions`);
    await page.getByRole('button', { name: 'Check for updates' }).click();
    const outcome = page.getByTestId('command-outcome').filter({ hasText: 'Update check' });
    await outcome.getByRole('table').waitFor({ timeout: 15_000 });
    expect(await outcome.locator('th').allTextContents()).toEqual(expect.arrayContaining(['Name', 'Current', 'New']));
    expect(await outcome.textContent()).not.toMatch(/[{}"]/);
  });

  it('names the object of each change in the audit log, details as key: value', async () => {
    await page.goto(`${server.url}/audit`);
    const row = page.getByTestId('audit-row').filter({ hasText: 'agent.assign_customer' }).first();
    await row.waitFor();
    expect(await row.textContent()).toContain('agent demo-3 (Bäckerei Sonnenschein GmbH)');
    const details = row.getByTestId('audit-details');
    expect((await details.textContent())?.replace(/\s+/g, ' ')).toMatch(/^result: 200 OK ?from: 127\.0\.0\.1 ?request: PUT \/api\/v1\/agents\/[0-9a-f]+\/customer$/);
    expect(await details.textContent()).not.toMatch(/[{}"]/);
    const edit = page.getByTestId('audit-row').filter({ hasText: 'task.update' }).first();
    expect(await edit.textContent()).toContain(`task Evening check (#${taskId})`);
  });

  it('takes the screenshots of docs/console.md of the changed pages at both sizes', async () => {
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    const shots: Array<[string, string]> = [
      ['fleet-severity', '/'],
      ['task-result', `/tasks/${taskId}`],
      ['audit-targets', '/audit'],
      ['firmware', '/firmware'],
    ];
    for (const size of SIZES) {
      await page.setViewportSize(size);
      for (const [name, path] of shots) {
        await page.goto(`${server.url}${path}`);
        await page.locator('main h1').first().waitFor();
        await expect.poll(() => page.getByText('Loading…').count()).toBe(0);
        expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
        await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-${size.name}.png`) });
      }
    }
    await page.setViewportSize(SIZES[0]);
  });

  it('met no page errors, CSP violations or dialogs', () => {
    expect(trouble).toEqual([]);
  });
});
