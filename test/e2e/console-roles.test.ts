// The console follows the user's role and customers (issue 35), in headless Chromium against the real
// server: a read user finds none of the write controls an admin sees on the same pages, and no Users,
// Settings or Terminal; a write user limited to customer A sees only A's agents and customers and
// nothing server-wide; an admin creates a read user limited to a customer on the Users page and changes
// the role; the account page lists two sessions of two browsers, and ending the other one sends that
// browser back to the sign-in page at its next request.
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn, watchForTrouble } from '../helpers/browser.js';
import { startConsole, type ConsoleRun } from '../helpers/console-run.js';
import { adminToken, bearer, createCustomer, createKey } from '../helpers/identity.js';
import type { LiveServer } from '../helpers/live-agent.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/spawn-server.js';

const ADMIN_PASSWORD = 'admin-password-1';
const PASSWORD = 'role-password-1';

describe('the console by role and customers', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let run: ConsoleRun;
  let server: LiveServer;
  let browser: Browser;
  let admin: Page;
  let token: string;
  const ids = { customerA: 0, customerB: 0, agentA: '', agentB: '', task: 0 };

  /** A browser of its own (its own sessionStorage), signed in and on the fleet page. */
  const openAs = async (username: string, password = PASSWORD) => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const trouble = watchForTrouble(page);
    await page.goto(`${server.url}/`);
    await signIn(page, username, password);
    await page.getByTestId('count-online').waitFor();
    return { page, trouble, close: () => context.close() };
  };
  const createUser = async (username: string, role: string, customer_ids: number[] | null) => {
    const res = await server.app.inject({ method: 'POST', url: '/api/v1/users', headers: bearer(token), payload: { username, password: PASSWORD, role, customer_ids } });
    expect(res.statusCode, res.body).toBe(201);
  };

  beforeAll(async () => {
    run = await startConsole();
    ({ server, page: admin } = run);
    browser = admin.context().browser()!;
    token = await adminToken(server, 'admin', ADMIN_PASSWORD);
    ids.customerA = (await createCustomer(server.app, token, '10001', 'Alpha GmbH')).id;
    ids.customerB = (await createCustomer(server.app, token, '10002', 'Beta AG')).id;
    ids.agentA = await server.register((await createKey(server.app, bearer(token), 'agent', ids.customerA)).key, 'pve-alpha');
    ids.agentB = await server.register((await createKey(server.app, bearer(token), 'agent', ids.customerB)).key, 'pve-beta');
    const task = await server.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      headers: bearer(token),
      payload: { agent_id: ids.agentA, kind: 'exec', params: { command: 'uptime' }, cron: '0 3 * * *', name: 'Nightly uptime' },
    });
    expect(task.statusCode, task.body).toBe(201);
    ids.task = task.json<{ id: number }>().id;
    await createUser('reader', 'read', null);
    await createUser('tech-a', 'write', [ids.customerA]);
    await run.signInToFleet('admin', ADMIN_PASSWORD);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(() => run?.close());

  /**
   * Where each write control is, and what shows once the page has loaded (so a missing control is
   * missing, not still loading). Every one is checked present for the admin first.
   */
  const WRITE_CONTROLS: Array<{ path: () => string; loaded: (p: Page) => Locator; control: (p: Page) => Locator }> = [
    { path: () => '/agents', loaded: (p) => p.getByTestId('agent-row').first(), control: (p) => p.getByRole('button', { name: 'Pre-register' }) },
    { path: () => '/agents', loaded: (p) => p.getByTestId('agent-row').first(), control: (p) => p.getByRole('checkbox', { name: 'Select all shown' }) },
    { path: () => `/agents/${ids.agentA}`, loaded: (p) => p.getByTestId('agent-tags'), control: (p) => p.getByRole('button', { name: 'Edit tags and note' }) },
    { path: () => `/agents/${ids.agentA}`, loaded: (p) => p.getByTestId('agent-tags'), control: (p) => p.locator('.tabs').getByRole('link', { name: 'Actions' }) },
    { path: () => `/agents/${ids.agentA}/tunnels`, loaded: (p) => p.getByRole('heading', { name: 'Open tunnels' }), control: (p) => p.getByRole('heading', { name: 'Open a tunnel' }) },
    { path: () => '/customers', loaded: (p) => p.getByTestId('customer-row').first(), control: (p) => p.getByRole('button', { name: 'Create customer' }) },
    { path: () => `/customers/${ids.customerA}`, loaded: (p) => p.getByTestId('installer-key-hint'), control: (p) => p.getByRole('button', { name: 'Delete customer' }) },
    { path: () => `/customers/${ids.customerA}`, loaded: (p) => p.getByTestId('installer-key-hint'), control: (p) => p.getByRole('button', { name: 'Add rule' }) },
    { path: () => `/customers/${ids.customerA}`, loaded: (p) => p.getByTestId('installer-key-hint'), control: (p) => p.getByRole('button', { name: 'Create key' }) },
    { path: () => '/tasks', loaded: (p) => p.getByTestId('task-row').first(), control: (p) => p.getByRole('button', { name: 'Create task' }) },
    { path: () => `/tasks/${ids.task}`, loaded: (p) => p.getByTestId('task-status'), control: (p) => p.getByRole('button', { name: 'Run now' }) },
    { path: () => '/alerts/rules', loaded: (p) => p.locator('tbody tr').first(), control: (p) => p.getByRole('button', { name: 'New rule' }) },
    { path: () => '/alerts/rules', loaded: (p) => p.locator('tbody tr').first(), control: (p) => p.getByRole('button', { name: 'Delete' }).first() },
    { path: () => '/alerts/channels', loaded: (p) => p.getByRole('region', { name: 'Notification channels' }), control: (p) => p.getByRole('button', { name: 'New channel' }) },
    { path: () => '/firmware', loaded: (p) => p.getByTestId('firmware-agent-row').first(), control: (p) => p.getByRole('button', { name: 'Request update' }).first() },
    { path: () => '/scripts', loaded: (p) => p.getByText('Scripts run on one agent'), control: (p) => p.getByRole('button', { name: 'New script' }) },
    // Check policies (issue 61) are server-wide: a read user with every customer reads them, never changes them.
    { path: () => '/checks/policies', loaded: (p) => p.getByText('Each agent runs the checks'), control: (p) => p.getByRole('button', { name: 'New policy' }) },
  ];
  const nav = (p: Page, label: string) => p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label, exact: true });

  it('shows a read user none of the write controls the admin sees, and no Users, Settings or Terminal', async () => {
    for (const label of ['Users', 'Settings', 'Terminal']) expect(await nav(admin, label).count(), label).toBe(1);
    for (const { path, loaded, control } of WRITE_CONTROLS) {
      await admin.goto(`${server.url}${path()}`);
      await loaded(admin).waitFor({ timeout: 15_000 });
      await control(admin).waitFor({ timeout: 15_000 });
    }

    const reader = await openAs('reader');
    try {
      for (const label of ['Users', 'Settings', 'Terminal']) expect(await nav(reader.page, label).count(), label).toBe(0);
      expect(await nav(reader.page, 'Agents').count()).toBe(1);
      const shown: string[] = [];
      for (const { path, loaded, control } of WRITE_CONTROLS) {
        await reader.page.goto(`${server.url}${path()}`);
        await loaded(reader.page).waitFor({ timeout: 15_000 });
        await reader.page.waitForLoadState('networkidle');
        if ((await control(reader.page).count()) > 0) shown.push(`${path()}: ${String(control(reader.page))}`);
      }
      expect(shown).toEqual([]);
      // The read user still reads: both customers' agents, and the users list (they have every customer).
      await reader.page.goto(`${server.url}/agents`);
      await expect.poll(() => reader.page.getByTestId('agent-row').count(), { timeout: 15_000 }).toBe(2);
      // Their own account stays theirs: two-factor and sessions.
      await reader.page.goto(`${server.url}/account`);
      await reader.page.getByRole('button', { name: 'Set up two-factor sign-in' }).waitFor();
      await reader.page.getByRole('button', { name: 'Sign out everywhere' }).waitFor();
      // The console asked nothing the server refuses them (a 403 would be logged as a console error).
      expect(reader.trouble).toEqual([]);
    } finally {
      await reader.close();
    }
  });

  it("shows a write user limited to customer A only A's agents and customers, and nothing server-wide", async () => {
    const tech = await openAs('tech-a');
    try {
      const { page } = tech;
      for (const label of ['Users', 'Settings', 'Terminal']) expect(await nav(page, label).count(), label).toBe(0);
      await nav(page, 'Agents').click();
      await page.getByTestId('agent-row').first().waitFor({ timeout: 15_000 });
      await page.waitForLoadState('networkidle');
      expect(await page.getByTestId('agent-row').allTextContents()).toEqual([expect.stringContaining('pve-alpha')]);
      // A write user: agents may be pre-registered and picked for a bulk action.
      await page.getByRole('button', { name: 'Pre-register' }).waitFor();

      await nav(page, 'Customers').click();
      await page.getByTestId('customer-row').first().waitFor({ timeout: 15_000 });
      await page.waitForLoadState('networkidle');
      expect(await page.getByTestId('customer-row').allTextContents()).toEqual([expect.stringContaining('Alpha GmbH')]);
      // A new customer is server-wide.
      expect(await page.getByRole('button', { name: 'Create customer' }).count()).toBe(0);

      await nav(page, 'Firmware').click();
      await page.getByTestId('firmware-agent-row').first().waitFor({ timeout: 15_000 });
      expect(await page.getByRole('form', { name: 'Upload firmware' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Store installer' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Request update', exact: true }).count()).toBe(1);

      // Policies name every customer: no Policies tab for a limited user, the failing view instead.
      await page.goto(`${server.url}/checks/policies`);
      await page.getByRole('region', { name: 'Failing checks' }).waitFor({ timeout: 15_000 });
      await page.waitForLoadState('networkidle');
      expect(await page.getByRole('navigation', { name: 'Checks sections' }).getByRole('link', { name: 'Policies' }).count()).toBe(0);

      // Beta's agent is out of reach even by its address.
      await page.goto(`${server.url}/agents/${ids.agentB}`);
      await page.getByRole('alert').waitFor({ timeout: 15_000 });
      expect(await page.getByRole('heading', { name: 'pve-beta' }).count()).toBe(0);
      // That refusal (404) is the only thing the browser logged.
      expect(tech.trouble.filter((t) => !t.includes('404 (Not Found)'))).toEqual([]);
    } finally {
      await tech.close();
    }
  });

  it('lets the admin create a read user limited to a customer, shown with role and scope, then change the role', async () => {
    await nav(admin, 'Users').click();
    const form = admin.getByRole('form', { name: 'Create a user' });
    await form.getByLabel('Username').fill('auditor');
    await form.getByLabel('Password').fill(PASSWORD);
    await form.getByLabel('Role').selectOption('read');
    await form.getByLabel('Only these customers').check();
    await form.getByLabel('10002 Beta AG').check();
    await form.getByRole('button', { name: 'Create user' }).click();
    const row = admin.getByTestId('user-row').filter({ hasText: 'auditor' });
    await row.waitFor({ timeout: 15_000 });
    expect(await row.getByTestId('user-role').textContent()).toBe('read');
    expect(await row.getByTestId('user-scope').textContent()).toBe('Beta AG');
    const self = admin.locator('[data-testid="user-row"][data-username="admin"]');
    expect(await self.getByTestId('user-scope').textContent()).toBe('All customers');

    await row.getByRole('button', { name: 'Change access' }).click();
    const change = row.getByTestId('change-access-form');
    expect(await change.textContent()).toContain("ends all of auditor's sessions");
    await change.getByLabel('Role').selectOption('write');
    await change.getByRole('button', { name: 'Save access' }).click();
    await expect.poll(() => row.getByTestId('user-role').textContent(), { timeout: 15_000 }).toBe('write');
    expect(await row.getByTestId('user-scope').textContent()).toBe('Beta AG');

    const users = await server.app.inject({ method: 'GET', url: '/api/v1/users', headers: bearer(token) });
    expect(users.json<Array<{ username: string; role: string; customer_ids: number[] | null }>>().find((u) => u.username === 'auditor')).toMatchObject({
      role: 'write',
      customer_ids: [ids.customerB],
    });

    // The last admin with every customer cannot be demoted: the server's reason shows in the form.
    await self.getByRole('button', { name: 'Change access' }).click();
    await self.getByLabel('Role').selectOption('write');
    await self.getByRole('button', { name: 'Save access' }).click();
    await expect.poll(() => self.getByRole('alert').textContent(), { timeout: 15_000 }).toContain('last admin with every customer');
    await self.getByRole('button', { name: 'Cancel' }).click();
    expect(run.trouble.filter((t) => !t.includes('409 (Conflict)'))).toEqual([]);
  });

  it("lists two browsers' sessions on the account page; ending the other one signs that browser out at its next request", async () => {
    await createUser('roaming', 'read', null);
    const laptop = await openAs('roaming');
    const phone = await openAs('roaming');
    try {
      await laptop.page.getByRole('link', { name: 'roaming' }).click();
      const rows = laptop.page.getByTestId('session-row');
      await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(2);
      const current = rows.filter({ hasText: 'this device' });
      expect(await current.count()).toBe(1);
      expect(await current.textContent()).toMatch(/Chrome on Linux/);
      const other = laptop.page.locator('[data-testid="session-row"]:not([data-current])');
      await other.getByRole('button', { name: 'End' }).click();
      await other.getByRole('button', { name: 'Yes, end' }).click();
      await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(1);

      // The phone still shows its page; its next request is refused and it lands on the sign-in page.
      await nav(phone.page, 'Agents').click();
      await phone.page.getByRole('button', { name: 'Sign in' }).waitFor({ timeout: 15_000 });
      expect(await phone.page.getByRole('status').textContent()).toContain('Your session has ended');
      // The laptop's session is untouched.
      await nav(laptop.page, 'Agents').click();
      await laptop.page.getByTestId('agent-row').first().waitFor({ timeout: 15_000 });
      expect(laptop.trouble).toEqual([]);
    } finally {
      await laptop.close();
      await phone.close();
    }
  });
});
