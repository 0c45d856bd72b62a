// Onboarding in the console (issue 33, Build 1) in headless Chromium against the real server: a technician
// pre-registers an agent, the page shows its install commands, the Linux one is run through a shell
// exactly as shown, and the agent it installs registers with its customer (the list shows it online
// under that customer). An enrollment key past its expiry is refused and listed as expired.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOT_DIR } from '../helpers/browser.js';
import { startConsole, type ConsoleRun } from '../helpers/console-run.js';
import { adminToken, apiKey, bearer, createCustomer } from '../helpers/identity.js';
import { InstallRuns, uploadLauncherFirmware } from '../helpers/install-run.js';
import type { LiveServer } from '../helpers/live-agent.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/spawn-server.js';

const ADMIN_PASSWORD = 'admin-password-1';

describe('onboarding in the console', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let run: ConsoleRun;
  let server: LiveServer;
  let page: Page;
  let trouble: string[];
  let token: string;
  let customerId: number;
  const installs = new InstallRuns();

  beforeAll(async () => {
    run = await startConsole();
    ({ server, page, trouble } = run);
    token = await adminToken(server, 'admin', ADMIN_PASSWORD);
    customerId = (await createCustomer(server.app, token, '10001', 'Bäckerei Sonnenschein GmbH')).id;
    await uploadLauncherFirmware(server.url, bearer(token));
    const settings = await server.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: bearer(token), payload: { backend_url: server.url } });
    expect(settings.statusCode, settings.body).toBe(200);
    await run.signInToFleet('admin', ADMIN_PASSWORD);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(async () => {
    await installs.stopAll();
    await run?.close();
  });

  it('pre-registers an agent, shows its install commands, and the Linux one installs it with its customer', async () => {
    await page.getByRole('link', { name: 'Agents', exact: true }).click();
    await page.getByLabel('Name', { exact: true }).fill('baeckerei-pve-1');
    await page.locator('select[name="agent-customer"]').selectOption(String(customerId));
    await page.getByRole('button', { name: 'Pre-register' }).click();
    const panel = page.getByTestId('install-panel');
    await panel.getByRole('heading', { name: 'Install baeckerei-pve-1' }).waitFor();
    await panel.getByLabel('Installs allowed').fill('3');
    await panel.getByRole('button', { name: 'Show install commands' }).click();
    const linux = page.getByTestId('install-command-linux');
    await linux.waitFor();
    // Windows has no installer package here: the console says so beside its command.
    expect(await page.getByTestId('install-command-windows').textContent()).toContain('No installer package for Windows');
    expect(await page.getByTestId('install-commands').textContent()).toMatch(/3 install\(s\)/);
    await shoot('install-commands', panel);

    const command = ((await linux.getByTestId('command-text').textContent()) ?? '').trim();
    expect(command).toMatch(/^curl -fsSL -H 'X-API-Key: rmm_\w+' '.+\/api\/v1\/install\/agent\.sh\?platform=linux&name=baeckerei-pve-1' \| sh$/);
    const { stdout } = await installs.run(command);
    expect(stdout).toContain('Installed in');

    // The installed agent adopts the record pre-registered for it, with its customer, and the list shows it online there.
    const online = async () => (await server.app.inject({ method: 'GET', url: '/api/v1/agents?q=baeckerei&status=online', headers: bearer(token) })).json() as Array<{ customer_id: number; hostname: string }>;
    await expect.poll(online, { timeout: 30_000, interval: 250 }).toEqual([expect.objectContaining({ customer_id: customerId })]);
    await page.goto(`${server.url}/agents`);
    const row = page.getByTestId('agent-row').filter({ hasText: 'baeckerei-pve-1' });
    await row.waitFor();
    expect(await row.textContent()).toMatch(/online/i);
    expect(await row.textContent()).toContain('Bäckerei Sonnenschein GmbH');
    expect(await row.textContent()).not.toContain('(ausstehend)');

    // The key the command carried counts that install.
    await page.getByRole('link', { name: 'Customers', exact: true }).click();
    await page.getByTestId('customer-row').filter({ hasText: 'Bäckerei' }).getByRole('link').first().click();
    const keyRow = page.getByTestId('api-key-row').filter({ hasText: 'Enrollment: baeckerei-pve-1' });
    await expect.poll(async () => (await keyRow.textContent()) ?? '', { timeout: 15_000 }).toContain('1 of 3');
    await page.getByTestId('install-panel').getByRole('button', { name: 'Show install commands' }).click();
    await page.getByTestId('install-command-linux').waitFor();
    expect(await page.getByTestId('install-commands').textContent()).toContain('a new device');
  });

  it('refuses an enrollment key past its expiry and lists it as expired', async () => {
    const created = await server.app.inject({
      method: 'POST',
      url: '/api/v1/apikeys',
      headers: bearer(token),
      payload: { name: 'Enrollment: short-lived', permissions: 'agent', customer_id: customerId, expires_at: new Date(Date.now() + 1500).toISOString() },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { key } = created.json() as { key: string };
    await sleep(1600);
    const refused = await fetch(`${server.url}/api/v1/install/agent.sh?platform=linux`, { headers: apiKey(key) });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: string }).error).toMatch(/^API key expired at /);

    await page.getByRole('link', { name: 'API keys', exact: true }).click();
    const row = page.getByTestId('api-key-row').filter({ hasText: 'Enrollment: short-lived' });
    await row.waitFor();
    expect(await row.getByTestId('key-expiry').textContent()).toBe('expired');
    await shoot('api-keys', row);
  });

  it('met no page errors, CSP violations or dialogs', () => {
    expect(trouble).toEqual([]);
  });

  /** A screenshot of the current page at 1280×800 and 390×844 for docs/console.md; the page never scrolls sideways. */
  async function shoot(name: string, focus: Locator): Promise<void> {
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    for (const [width, height, size] of [[1280, 800, 'desktop'], [390, 844, 'mobile']] as const) {
      await page.setViewportSize({ width, height });
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), `${name} at ${width} px`).toBe(true);
      await focus.scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-${size}.png`) });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  }
});
