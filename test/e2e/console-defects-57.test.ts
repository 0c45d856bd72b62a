// Issue 57's console items 17–21 in headless Chromium against the real server: the task form offers a
// configuration backup only for firewalls; a group task's run links its bulk action and shows each
// agent's name and output; all firing alerts are acknowledged in one step; a bulk script says which
// agents it cannot run on, in the console's words, before it starts; and the smaller wording fixes
// (a pre-registered agent's host name reads "pending", an empty fleet says how agents arrive, install
// commands point to Settings for the server's address, alert tabs and My account have their titles).
import { generate } from 'otplib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsole, type ConsoleRun } from '../helpers/console-run.js';
import { signIn } from '../helpers/browser.js';
import { adminToken, apiKey, bearer, createCustomer, createKey, login, seedUser } from '../helpers/identity.js';
import type { LiveServer } from '../helpers/live-agent.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/spawn-server.js';

const PASSWORD = 'admin-password-1';

describe('console defects of issue 57', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let run: ConsoleRun;
  let server: LiveServer;
  let page: Page;
  let admin: Record<string, string>;
  let token: string;
  let agentKey: string;
  let customer: number;
  const ids: Record<string, string> = {};
  const api = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
    const res = await server.app.inject({ method, url: `/api/v1${url}`, headers: admin, ...(payload ? { payload } : {}) });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json() as Record<string, unknown>;
  };

  beforeAll(async () => {
    run = await startConsole({ server: { backgroundJobs: true }, viewport: { width: 1366, height: 768 } });
    ({ server, page } = run);
    token = await adminToken(server, 'admin', PASSWORD);
    admin = bearer(token);
    await run.signInToFleet('admin', PASSWORD);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(() => run?.close());

  it('an empty fleet says how agents arrive, not that a filter hides them', async () => {
    await page.goto(`${server.url}/agents`);
    await page.getByText('No agents yet. They appear here when they register').waitFor();
    expect(await page.getByText('No agents match.').count()).toBe(0);
  });

  it('install commands on a fresh server point to Settings for the server address', async () => {
    customer = (await createCustomer(server.app, token, '57001', 'Mixed GmbH')).id;
    await page.goto(`${server.url}/customers/${customer}`);
    await page.getByRole('button', { name: 'Show install commands' }).click();
    const banner = page.getByRole('alert').filter({ hasText: 'Install commands need this server' });
    await banner.waitFor();
    expect(await banner.getByRole('link', { name: 'Settings → Backend URL' }).getAttribute('href')).toBe('/settings');
    expect(await banner.textContent()).not.toContain('backend_url');
  });

  it('offers a configuration backup only for firewalls; a pre-registered agent shows as pending', async () => {
    agentKey = (await createKey(server.app, admin, 'agent', customer)).key;
    for (const [name, platform] of [['pve-1', 'linux'], ['pve-2', 'linux'], ['win-1', 'windows'], ['fw-1', 'freebsd']] as const) {
      ids[name] = (await server.startAgent(agentKey, { name, hostname: name, platform })).id;
    }
    await api('POST', '/agents', { name: 'fw-to-come', customer_id: customer });
    await page.goto(`${server.url}/agents`);
    const pendingRow = page.getByTestId('agents-table').locator('tr', { hasText: 'fw-to-come' });
    await pendingRow.waitFor();
    expect(await pendingRow.textContent()).toContain('pending');
    expect(await pendingRow.textContent()).not.toContain('ausstehend');

    await page.goto(`${server.url}/tasks`);
    const form = page.getByRole('form', { name: 'New task' });
    const kinds = async () => form.getByLabel('Kind').locator('option').allTextContents();
    await form.getByLabel('Agent').selectOption({ label: 'pve-1' });
    expect(await kinds()).not.toContain('Configuration backup');
    await form.getByLabel('Agent').selectOption({ label: 'fw-1' });
    expect(await kinds()).toContain('Configuration backup');
  });

  it('a bulk script names the agents it cannot run on before it starts, and runs on the others', async () => {
    await api('POST', '/scripts', { name: 'Kernel', shell: 'sh', body: 'echo kernel-$(uname -s)', platforms: ['linux'] });
    await page.goto(`${server.url}/customers/${customer}`);
    const form = page.getByRole('form', { name: 'Bulk action' });
    await form.getByLabel('Action').selectOption({ label: 'Run a script' });
    const kernel = await form.getByLabel('Script').locator('option', { hasText: /^Kernel / }).getAttribute('value');
    await form.getByLabel('Script').selectOption(kernel!);
    const note = page.getByTestId('script-platform-note');
    await note.waitFor();
    const text = await note.textContent();
    expect(text).toMatch(/runs on Hypervisors only/);
    // Five agents: the pre-registered one may turn out a Hypervisor, so it is not skipped.
    expect(text).toMatch(/2 of the 5 agents cannot run it and will be skipped: .*win-1 \(Windows\)/);
    expect(text).toContain('fw-1 (Firewall)');
    expect(text).not.toMatch(/linux|windows|freebsd/);
    await form.getByRole('button', { name: 'Start on 3 agents' }).click();
    const outputs = page.getByTestId('bulk-result-output');
    await expect.poll(async () => (await outputs.allTextContents()).filter((t) => t.startsWith('kernel-')), { timeout: 15_000 }).toEqual(['kernel-Linux', 'kernel-Linux']);
    expect(await page.getByTestId('bulk-result-row').count()).toBe(3);
  });

  it("a group task's run links its bulk action and shows each agent's name and output", async () => {
    const script = (await api('GET', '/scripts')) as unknown as Array<{ id: number }>;
    const task = await api('POST', '/tasks', { target: { customer_id: customer }, kind: 'script', params: { script_id: script[0]!.id }, name: 'Kernel everywhere' });
    await page.goto(`${server.url}/tasks/${String(task.id)}`);
    const result = page.getByTestId('group-run-result');
    await result.waitFor({ timeout: 20_000 });
    expect(await result.getByRole('link', { name: /^Bulk action \d+$/ }).count()).toBe(1);
    const outputs = result.getByTestId('bulk-result-output');
    // The pre-registered agent is still waited for: its row has no output yet.
    await expect.poll(async () => (await outputs.allTextContents()).sort(), { timeout: 20_000 }).toEqual(['kernel-Linux', 'kernel-Linux', '–']);
    // Agents by name, linked to their pages (not 32 hex characters).
    expect((await result.getByTestId('bulk-result-row').locator('td:first-child a').allTextContents()).sort()).toEqual(['fw-to-come', 'pve-1', 'pve-2']);
  });

  it('acknowledges every firing alert shown in one step; alert tabs and My account name themselves', async () => {
    await api('POST', '/alert-rules', { name: 'Always hot', kind: 'metric_threshold', params: { metric: 'cpu_usage', operator: '>=', threshold: 0, for_seconds: 0 } });
    for (const [name, platform] of [['pve-1', 'linux'], ['pve-2', 'linux'], ['win-1', 'windows']]) {
      const beat = await server.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: apiKey(agentKey), payload: { agent_id: ids[name!], platform, cpu: { usage_percent: 50 } } });
      expect(beat.statusCode, beat.body).toBe(200);
    }
    await page.goto(`${server.url}/alerts`);
    await expect.poll(() => page.title()).toBe('Open alerts · Alerts · RMM');
    const button = page.getByRole('button', { name: /^Acknowledge all \d+ firing$/ });
    await button.waitFor({ timeout: 20_000 });
    await button.click();
    await page.getByLabel(/Comment for all/).fill('Heat wave, on it');
    await page.getByRole('form', { name: 'Acknowledge all firing alerts' }).getByRole('button', { name: /^Acknowledge \d+$/ }).click();
    await page.getByRole('status').filter({ hasText: /^Acknowledged \d+/ }).waitFor();
    const firing = (await api('GET', '/alerts?state=firing')) as unknown as unknown[];
    expect(firing).toEqual([]);
    await page.getByRole('link', { name: 'Rules', exact: true }).click();
    await expect.poll(() => page.title()).toBe('Rules · Alerts · RMM');
    await page.goto(`${server.url}/account`);
    await expect.poll(() => page.title()).toBe('My account · RMM');
  });

  it('host names on alert cards may wrap only at dots and hyphens, never mid-word', async () => {
    await page.goto(`${server.url}/alerts`);
    const agentFact = page.getByTestId('alert-card').first().locator('.alert-agent-fact dd');
    await agentFact.waitFor();
    expect(await agentFact.locator('a').innerHTML()).toMatch(/^pve-<wbr>\d$|^win-<wbr>1$/);
    // The page's own function, as text: the test's types know no DOM.
    expect(await agentFact.evaluate(new Function('dd', 'return getComputedStyle(dd).overflowWrap') as (dd: unknown) => string)).toBe('break-word');
  });

  it('the code step of a two-step sign-in does not repeat "You have signed out."', async () => {
    await seedUser(server, 'tech', 'tech-password-1');
    const techToken = await login(server.app, 'tech', 'tech-password-1');
    const setup = (await server.app.inject({ method: 'POST', url: '/api/v1/auth/2fa/setup', headers: bearer(techToken), payload: {} })).json() as { secret: string };
    const code = await generate({ secret: setup.secret });
    expect((await server.app.inject({ method: 'POST', url: '/api/v1/auth/2fa/confirm', headers: bearer(techToken), payload: { code } })).statusCode).toBe(200);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You have signed out.').waitFor();
    await signIn(page, 'tech', 'tech-password-1');
    await page.getByLabel('Authentication code').waitFor();
    expect(await page.getByText('You have signed out.').count()).toBe(0);
  });
});
