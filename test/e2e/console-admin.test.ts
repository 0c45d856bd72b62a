// The console's administration pages in headless Chromium against the real server (issue 16): a
// customer created and given a scoped API key (shown once, then only its hint), its software-update
// rules and the lists its PCs download (with winget-autoupdate's ListPath, and a new installer key
// shown once), a new user created, who turns on two-factor sign-in from their account page with the QR
// code's secret and then signs in with a code, a recurring task with the
// preview of its next runs, a firmware upload with its progress bar and an update request shown on the
// agent, firmware versions shown signed or not, downloaded with the session and deleted after asking, the
// updater's report on the agent (and nothing broken when an older server sends neither field), and the
// audit log listing all of it.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generate } from 'otplib';
import type { Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOT_DIR, signIn } from '../helpers/browser.js';
import { startConsole, type ConsoleRun } from '../helpers/console-run.js';
import { adminToken, apiKey, bearer, createKey } from '../helpers/identity.js';
import type { LiveServer } from '../helpers/live-agent.js';
import { ShiftedClock } from '../helpers/shifted-clock.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/spawn-server.js';

const ADMIN_PASSWORD = 'admin-password-1';
const ANNA_PASSWORD = 'anna-password-7';

describe('the console administration pages', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  const clock = new ShiftedClock();
  let run: ConsoleRun;
  let server: LiveServer;
  let page: Page;
  let trouble: string[];
  let scopedKey: string;
  let agentKey: string;
  let fwTasksId: string;
  const firmwareBytes = randomBytes(3 * 1024 * 1024);

  const signOut = async () => {
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
  };

  beforeAll(async () => {
    run = await startConsole({ server: { clock } });
    ({ server, page, trouble } = run);
    const token = await adminToken(server, 'admin', ADMIN_PASSWORD);
    agentKey = (await createKey(server.app, bearer(token), 'agent')).key;
    // An agent for the task (registered, not connected: a recurring task only needs it to exist).
    const registered = await server.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(agentKey), payload: { hostname: 'fw-tasks.example', name: 'fw-tasks', platform: 'freebsd' } });
    expect(registered.statusCode, registered.body).toBe(200);
    fwTasksId = registered.json<{ agent_id: string }>().agent_id;
    await run.signInToFleet('admin', ADMIN_PASSWORD);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(() => run?.close());

  it('creates a customer and a key scoped to it, shown once and then only as its hint', async () => {
    await page.getByRole('link', { name: 'Customers', exact: true }).click();
    await page.getByLabel('Customer number').fill('10001');
    await page.getByLabel('Name', { exact: true }).fill('Bäckerei Sonnenschein GmbH');
    await page.getByRole('button', { name: 'Create customer' }).click();
    const row = page.getByTestId('customer-row').filter({ hasText: 'Bäckerei Sonnenschein GmbH' });
    await row.waitFor({ timeout: 15_000 });
    await row.getByRole('link').first().click();
    await page.getByRole('heading', { name: /Bäckerei Sonnenschein GmbH/ }).waitFor();

    await page.getByLabel('Key name').fill('Buchhaltung read');
    await page.getByLabel('Permission').selectOption('read');
    await page.getByRole('button', { name: 'Create key' }).click();
    scopedKey = ((await page.getByTestId('secret-value').textContent()) ?? '').trim();
    expect(scopedKey.length).toBeGreaterThan(20);
    const keyRow = page.getByTestId('api-key-row').filter({ hasText: 'Buchhaltung read' });
    await keyRow.waitFor();
    expect(await keyRow.textContent()).toContain(scopedKey.slice(0, 8));
    expect(await keyRow.textContent()).not.toContain(scopedKey);
    expect(await keyRow.textContent()).toContain('Bäckerei Sonnenschein GmbH');

    // The key works, within its customer only: an unscoped list of customers shows just this one.
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/customers', headers: apiKey(scopedKey) });
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as Array<{ name: string }>).map((c) => c.name)).toEqual(['Bäckerei Sonnenschein GmbH']);

    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByTestId('secret-once').count()).toBe(0);
    await page.getByRole('link', { name: 'API keys', exact: true }).click();
    await expect.poll(() => page.getByTestId('api-key-row').filter({ hasText: 'Buchhaltung read' }).count()).toBe(1);
  });

  it("edits the customer's software-update rules and shows the lists its PCs download", async () => {
    await page.getByRole('link', { name: 'Customers', exact: true }).click();
    await page.getByTestId('customer-row').filter({ hasText: 'Bäckerei Sonnenschein GmbH' }).getByRole('link').first().click();
    const wau = page.getByRole('region', { name: 'Windows software updates' });
    const form = wau.getByRole('form', { name: 'Add a rule' });
    for (const [id, action] of [['Mozilla.Firefox', 'allow'], ['Google.Chrome', 'block']] as const) {
      await form.getByLabel('Package id').fill(id);
      await form.locator('select').selectOption(action);
      await form.getByRole('button', { name: 'Add rule' }).click();
      await wau.getByRole('cell', { name: id }).first().waitFor({ timeout: 15_000 });
    }
    const shown = wau.locator('.wau-list-text pre');
    await wau.getByRole('listitem').filter({ hasText: '/wau/included' }).getByRole('button', { name: 'Show' }).click();
    await expect.poll(() => shown.textContent(), { timeout: 15_000 }).toBe('Mozilla.Firefox\n');
    await wau.getByRole('listitem').filter({ hasText: '/wau/excluded' }).getByRole('button', { name: 'Show' }).click();
    await expect.poll(() => shown.textContent(), { timeout: 15_000 }).toBe('Google.Chrome\n');

    // winget-autoupdate's ListPath in the form of docs/wau.md, and a new installer key shown once with it filled in.
    const customerId = new URL(page.url()).pathname.split('/').pop();
    const settings = await server.app.inject({ method: 'GET', url: '/api/v1/settings', headers: bearer(await adminToken(server, 'admin', ADMIN_PASSWORD)) });
    const base = settings.json<{ backend_url: string | null }>().backend_url ?? new URL(page.url()).origin;
    const listPath = (key: string) => `${base}/api/v1/customers/${customerId}/wau?api_key=${key}`;
    expect(await wau.getByTestId('wau-list-path').textContent()).toBe(listPath('<agent key>'));
    const installer = page.getByRole('region', { name: 'Installer key' });
    await installer.getByRole('button', { name: 'New installer key' }).click();
    await installer.getByRole('button', { name: 'Yes, new installer key' }).click();
    const installerKey = ((await installer.getByTestId('secret-value').textContent({ timeout: 15_000 })) ?? '').trim();
    expect(await installer.getByTestId('wau-list-path-with-key').textContent()).toBe(listPath(installerKey));
    await expect.poll(() => installer.getByTestId('installer-key-hint').textContent(), { timeout: 15_000 }).toContain(installerKey.slice(0, 8));
    // What WAU requests with that ListPath is the customer's list.
    const list = await server.app.inject({ method: 'GET', url: `/api/v1/customers/${customerId}/wau/included_apps.txt?api_key=${installerKey}` });
    expect([list.statusCode, list.body]).toEqual([200, 'Mozilla.Firefox\n']);
    await installer.getByRole('button', { name: 'Done' }).click();
    expect(await installer.getByTestId('wau-list-path-with-key').count()).toBe(0);
  });

  it('creates a user who turns on two-factor sign-in and then signs in with a code', async () => {
    await page.getByRole('link', { name: 'Users', exact: true }).click();
    await page.getByLabel('Username').fill('anna');
    await page.getByLabel('Password').fill(ANNA_PASSWORD);
    // New users start as read; anna goes on to create tasks and upload firmware below.
    await page.getByLabel('Role').selectOption('admin');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByTestId('user-row').filter({ hasText: 'anna' }).waitFor({ timeout: 15_000 });
    await signOut();

    await signIn(page, 'anna', ANNA_PASSWORD);
    await page.getByRole('link', { name: 'anna' }).click();
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    await page.locator('svg.qr-code').waitFor();
    const secret = ((await page.getByTestId('totp-secret').textContent()) ?? '').replace(/\s/g, '');
    expect(secret).toMatch(/^[A-Z2-7]{16,}=*$/);
    // Confirmed with a code of a minute ago (the server's clock set back too), so the code the sign-in
    // below uses belongs to a later time step and is not refused as a replay.
    // A mistyped code is refused on the page and does not end the session.
    await page.getByLabel('Authentication code').fill(wrongCode(await generate({ secret, epoch: Math.floor(Date.now() / 1000) })));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByRole('alert').waitFor({ timeout: 15_000 });
    expect(await page.getByRole('button', { name: 'Sign out', exact: true }).count()).toBe(1);
    clock.offsetMs = -60_000;
    try {
      await page.getByLabel('Authentication code').fill(await generate({ secret, epoch: Math.floor(clock.now().getTime() / 1000) }));
      await page.getByRole('button', { name: 'Turn on' }).click();
      await expect.poll(() => page.getByText('Two-factor sign-in is on').count(), { timeout: 15_000 }).toBeGreaterThan(0);
    } finally {
      clock.offsetMs = 0;
    }
    await signOut();

    await signIn(page, 'anna', ANNA_PASSWORD);
    await page.getByLabel('Authentication code').fill(await generate({ secret, epoch: Math.floor(Date.now() / 1000) }));
    await page.getByRole('button', { name: 'Verify' }).click();
    // Signed in again where she signed out: her account page, now saying 2FA is on.
    await expect.poll(() => page.getByText('Two-factor sign-in is on').count(), { timeout: 15_000 }).toBeGreaterThan(0);
    expect(await page.getByRole('link', { name: 'anna' }).count()).toBe(1);
  });

  it('creates a recurring task with a preview of its next runs', async () => {
    await page.getByRole('link', { name: 'Tasks', exact: true }).click();
    await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'fw-tasks' });
    await page.getByLabel('Kind', { exact: true }).selectOption('exec');
    await page.getByLabel('Command', { exact: true }).fill('echo hi');
    await page.getByLabel('Schedule', { exact: true }).selectOption('recurring');
    await page.getByLabel('Cron expression').fill('*/5 * * * *');
    const runs = page.getByTestId('cron-preview').getByTestId('cron-next-run');
    await expect.poll(() => runs.count()).toBe(5);
    // Every five minutes, in UTC: consecutive runs are 300 s apart.
    const at = async (i: number) => Date.parse((await runs.nth(i).locator('time').getAttribute('datetime')) ?? '');
    expect((await at(1)) - (await at(0))).toBe(300_000);
    expect(new Date(await at(0)).getUTCMinutes() % 5).toBe(0);
    await page.getByRole('button', { name: 'Create task' }).click();
    await expect.poll(() => page.getByTestId('task-status').textContent(), { timeout: 15_000 }).toContain('scheduled');
    expect(await page.getByText('*/5 * * * *').count()).toBeGreaterThan(0);
  });

  it('uploads firmware with a progress bar that completes, and the version is listed as the latest', async () => {
    await page.getByRole('link', { name: 'Firmware', exact: true }).click();
    const form = page.getByRole('form', { name: 'Upload firmware' });
    await form.locator('select').first().selectOption('freebsd');
    await form.getByLabel('Version').fill('25.7.9');
    await form.getByLabel('File').setInputFiles({ name: 'rmm-agent-freebsd', mimeType: 'application/octet-stream', buffer: firmwareBytes });
    await form.getByRole('button', { name: 'Upload' }).click();
    await expect.poll(() => form.getByText('Uploaded').count(), { timeout: 30_000 }).toBe(1);
    expect(await page.getByTestId('upload-progress').getAttribute('value')).toBe(String(await page.getByTestId('upload-progress').getAttribute('max')));
    await expect.poll(() => page.getByTestId('firmware-freebsd').textContent()).toContain('25.7.9');

    // An update requested for one agent shows on that agent, in the list and on its page.
    const agentRow = page.getByTestId('firmware-agent-row').filter({ hasText: 'fw-tasks' });
    await agentRow.getByRole('button', { name: 'Request update' }).click();
    await agentRow.getByText('yes', { exact: true }).waitFor({ timeout: 15_000 });
    await page.getByRole('link', { name: 'Agents', exact: true }).click();
    await page.getByTestId('agent-row').filter({ hasText: 'fw-tasks' }).getByText('update', { exact: true }).waitFor({ timeout: 15_000 });
    await page.getByRole('link', { name: 'fw-tasks', exact: true }).click();
    await page.getByRole('link', { name: 'update requested' }).waitFor({ timeout: 15_000 });
  });

  it('shows each version signed or not, downloads a version with the session and deletes one after asking', async () => {
    await page.getByRole('link', { name: 'Firmware', exact: true }).click();
    const form = page.getByRole('form', { name: 'Upload firmware' });
    await form.locator('select').first().selectOption('freebsd');
    await form.getByLabel('Version').fill('25.7.10');
    await form.getByLabel('File').setInputFiles({ name: 'rmm-agent-freebsd', mimeType: 'application/octet-stream', buffer: randomBytes(4096) });
    // Made offline in real life; this server holds no public key, so any well-formed signature is kept.
    await form.getByLabel('Signature (optional)').fill(randomBytes(64).toString('base64'));
    await form.getByRole('button', { name: 'Upload' }).click();
    await expect.poll(() => form.getByRole('status').textContent(), { timeout: 30_000 }).toMatch(/Uploaded .*25\.7\.10.*, signed$/);
    const row = (version: string) => page.getByTestId('firmware-freebsd').locator(`[data-testid="firmware-row"][data-version="${version}"]`);
    await expect.poll(() => row('25.7.10').textContent()).toMatch(/latest.*signed/);
    expect(await row('25.7.9').textContent()).toContain('unsigned');

    // Not the latest: the download names the version, and brings exactly the bytes uploaded.
    const [download] = await Promise.all([page.waitForEvent('download'), row('25.7.9').getByRole('button', { name: 'Download' }).click()]);
    expect(download.suggestedFilename()).toBe('rmm-agent-freebsd-25.7.9');
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(sha(await readFile(await download.path()))).toBe(sha(firmwareBytes));

    // On a phone the versions' table scrolls in its box, never the page, even with a delete's question open.
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await row('25.7.10').getByRole('button', { name: 'Delete' }).click();
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
      await row('25.7.10').getByRole('button', { name: 'Cancel' }).click();
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }

    // Deleting asks first; Cancel keeps it, confirming removes it and 25.7.9 is the latest again.
    await row('25.7.10').getByRole('button', { name: 'Delete' }).click();
    await row('25.7.10').getByRole('button', { name: 'Cancel' }).click();
    await row('25.7.10').getByRole('button', { name: 'Delete' }).click();
    await row('25.7.10').getByRole('group', { name: /Delete Firewall firmware 25\.7\.10\?/ }).getByRole('button', { name: 'Yes, delete' }).click();
    await expect.poll(() => row('25.7.10').count(), { timeout: 15_000 }).toBe(0);
    expect(await row('25.7.9').textContent()).toContain('latest');
    const latest = await server.app.inject({ method: 'GET', url: '/api/v1/firmware/latest?platform=freebsd', headers: apiKey(agentKey) });
    expect(latest.json<{ version: string }>().version).toBe('25.7.9');
  });

  it("shows the updater's last report on the agent and in the firmware page's list", async () => {
    const report = await server.app.inject({
      method: 'POST',
      url: `/api/v1/agents/${fwTasksId}/updater-report`,
      headers: apiKey(agentKey),
      payload: { state: 'rolled_back', version: '25.7.9', message: 'no heartbeat from the new binary within 120 s' },
    });
    expect(report.statusCode, report.body).toBe(200);
    await page.goto(`${server.url}/agents/${fwTasksId}`);
    const note = page.getByTestId('updater-report');
    await expect.poll(() => note.textContent(), { timeout: 15_000 }).toMatch(/^rolled back Update to 25\.7\.9 rolled back (just now|\d+ s ago): no heartbeat from the new binary within 120 s$/);
    await page.getByRole('link', { name: 'update requested' }).waitFor(); // the rollback asks again

    await page.getByRole('link', { name: 'Firmware', exact: true }).click();
    const badge = page.getByTestId('firmware-agent-row').filter({ hasText: 'fw-tasks' }).getByTestId('updater-report-badge');
    await expect.poll(() => badge.textContent(), { timeout: 15_000 }).toBe('rolled back');
    expect(await badge.getAttribute('title')).toContain('no heartbeat from the new binary within 120 s');
  });

  it('works with an older server that sends neither the updater report nor signatures', async () => {
    const strip = (field: string) => async (route: Route) => {
      const response = await route.fetch();
      const body = (await response.json()) as Record<string, unknown> | Array<Record<string, unknown>>;
      const without = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([key]) => key !== field));
      await route.fulfill({ response, json: Array.isArray(body) ? body.map(without) : without(body) });
    };
    await page.route(/\/api\/v1\/agents\/[0-9a-f]+$/, strip('updater'));
    await page.route(/\/api\/v1\/firmware(\?|$)/, strip('signature'));
    try {
      await page.goto(`${server.url}/agents/${fwTasksId}`);
      await page.getByRole('link', { name: 'update requested' }).waitFor({ timeout: 15_000 });
      expect(await page.getByTestId('updater-report').count()).toBe(0);
      await page.getByRole('link', { name: 'Firmware', exact: true }).click();
      const row = page.getByTestId('firmware-freebsd').getByTestId('firmware-row');
      await expect.poll(() => row.allTextContents(), { timeout: 15_000 }).toEqual([expect.stringMatching(/25\.7\.9.*unsigned/)]);
    } finally {
      await page.unrouteAll();
    }
  });

  it('lists these actions in the audit log, filterable by action', async () => {
    await page.getByRole('link', { name: 'Audit', exact: true }).click();
    const actions = () => page.getByTestId('audit-row').locator('td:nth-child(3)').allTextContents();
    await expect.poll(actions, { timeout: 15_000 }).toEqual(
      expect.arrayContaining(['customer.create', 'user.create', 'auth.2fa_enabled', 'task.create', 'firmware.upload', 'firmware.delete', 'agent.update_request']),
    );
    await page.getByLabel('Action', { exact: true }).fill('firmware.upload');
    await expect.poll(actions, { timeout: 15_000 }).toEqual(['firmware.upload', 'firmware.upload']);
  });

  it('takes screenshots of three pages at 1280×800 and 390×844 for docs/console.md', async () => {
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    const pages: Array<[string, string]> = [
      ['customers', '/customers'],
      ['tasks', '/tasks'],
      ['audit', '/audit'],
    ];
    for (const [width, height, size] of [[1280, 800, 'desktop'], [390, 844, 'mobile']] as const) {
      await page.setViewportSize({ width, height });
      for (const [name, path] of pages) {
        await page.goto(`${server.url}${path}`);
        await page.locator('h1').first().waitFor();
        await expect.poll(() => page.getByText('Loading…').count()).toBe(0);
        // Usable at this width: the page itself never scrolls sideways (wide tables scroll in their box).
        expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
        await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-${size}.png`) });
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('met no page errors, CSP violations or dialogs', () => {
    // The deliberately wrong code above is answered 401; the browser logs that failed request.
    expect(trouble.filter((t) => !t.includes('401 (Unauthorized)'))).toEqual([]);
  });
});

/** A six-digit code that is certainly not the current one. */
function wrongCode(current: string): string {
  return current === '000000' ? '111111' : '000000';
}
