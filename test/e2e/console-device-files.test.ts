// The agent's files, processes and services from the console (issue 59), in headless Chromium against
// the real server and a reference agent on this machine: a 50 MiB file made here is uploaded with its
// progress shown, listed, and downloaded back byte for byte; a folder is made, renamed and deleted after
// a confirmation; a `sleep` started here is killed from the Processes tab and is gone; a service is
// stopped and started with the result shown (on the fleet simulator's device, so the test never stops a
// service of this machine: test/device-services.test.ts does that with nginx through the API); and a
// read-only user sees processes and services without their buttons, and no Shell or Files tab.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { axeViolations, BLOCKING, describeViolations } from '../helpers/axe.js';
import { SCREENSHOT_DIR, signIn, watchForTrouble } from '../helpers/browser.js';
import { startConsole, type ConsoleRun } from '../helpers/console-run.js';
import { startDeviceAgent } from '../helpers/device-agent.js';
import { adminToken, bearer, createKey } from '../helpers/identity.js';
import type { LiveAgent, LiveServer } from '../helpers/live-agent.js';
import { simulatedDeviceHandlers } from '../../src/fleet/simulated-device.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/spawn-server.js';

const PASSWORD = 'admin-password-1';
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('the agent Files, Processes and Services tabs', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let run: ConsoleRun;
  let server: LiveServer;
  let page: Page;
  let trouble: string[];
  let agent: LiveAgent;
  /** A device of the fleet simulator: its services start and stop for real, in the simulation. */
  let simulated: LiveAgent;
  let token: string;
  /** The test's own directory: the source file, and the agent's folder the console works in. */
  let work: string;
  let deviceDir: string;
  let sleeper: ChildProcess | undefined;

  beforeAll(async () => {
    run = await startConsole({ viewport: { width: 1280, height: 900 } });
    ({ server, page, trouble } = run);
    token = await adminToken(server, 'admin', PASSWORD);
    const key = (await createKey(server.app, bearer(token), 'agent')).key;
    agent = await startDeviceAgent(server, token, key, { name: 'dev-files', hostname: 'dev-files' }, ['files', 'processes']);
    const deviceHandlers = simulatedDeviceHandlers('linux', 'pve-sim');
    simulated = await startDeviceAgent(server, token, key, { name: 'pve-sim', hostname: 'pve-sim', deviceHandlers }, ['services']);
    work = await mkdtemp(path.join(os.tmpdir(), 'rmm-e2e-files-'));
    deviceDir = path.join(work, 'device');
    await mkdir(deviceDir);
    await writeFile(path.join(deviceDir, 'notes.txt'), 'hello from the device\n');
    await run.signInToFleet('admin', PASSWORD);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(async () => {
    sleeper?.kill('SIGKILL');
    await run?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const openFiles = (dir: string) => page.goto(`${server.url}/agents/${agent.id}/files?path=${encodeURIComponent(dir)}`);
  const fileRow = (name: string) => page.locator(`[data-testid="file-row"][data-name="${name}"]`);

  it('uploads a 50 MiB file with its progress shown, lists it, and downloads it back equal', async () => {
    const original = randomBytes(50 * 1024 * 1024);
    const source = path.join(work, 'big.bin');
    await writeFile(source, original);
    await openFiles(deviceDir);
    await fileRow('notes.txt').waitFor({ timeout: 15_000 });

    // Every phase and progress value the transfer's row shows, as the page draws them.
    await page.evaluate(`(() => {
      window.__seen = [];
      new MutationObserver(() => {
        for (const row of document.querySelectorAll('[data-testid="transfer"]')) {
          window.__seen.push([row.getAttribute('data-phase'), Number(row.querySelector('progress')?.getAttribute('value') ?? -1)]);
        }
      }).observe(document.body, { subtree: true, attributes: true, childList: true });
    })()`);
    await page.getByLabel('Files to upload').setInputFiles(source);
    const transfer = page.getByTestId('transfer');
    await expect.poll(() => transfer.getAttribute('data-phase'), { timeout: 60_000 }).toBe('done');
    expect(await transfer.textContent()).toContain('50.0 MiB');
    const seen = (await page.evaluate('window.__seen')) as Array<[string, number]>;
    expect(seen.map(([phase]) => phase)).toContain('sending');
    expect(seen.some(([phase, value]) => phase === 'sending' && value > 0 && value < 100)).toBe(true);

    // On the device, complete; in the list, with its size.
    expect(sha256(await readFile(path.join(deviceDir, 'big.bin')))).toBe(sha256(original));
    await fileRow('big.bin').waitFor();
    expect(await fileRow('big.bin').textContent()).toContain('50.0 MiB');
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'device-files-desktop.png') });
    expect(describeViolations(await axeViolations(page, BLOCKING)), 'axe on the Files tab').toEqual([]);

    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), fileRow('big.bin').getByRole('button', { name: 'Download big.bin' }).click()]);
    expect(download.suggestedFilename()).toBe('big.bin');
    const saved = path.join(work, 'downloaded.bin');
    await download.saveAs(saved);
    expect((await stat(saved)).size).toBe(original.length);
    expect(sha256(await readFile(saved))).toBe(sha256(original));
    expect(trouble).toEqual([]);
  });

  it('makes a folder, opens it by name and by breadcrumb, renames it and deletes it after a confirmation', async () => {
    await page.getByRole('button', { name: 'New folder' }).click();
    const form = page.getByRole('form', { name: 'New folder name' });
    await form.getByLabel('New folder name').fill('reports');
    await form.getByRole('button', { name: 'Create' }).click();
    await fileRow('reports').waitFor();
    await fileRow('reports').getByRole('button', { name: 'reports/' }).click();
    await page.getByText('This folder is empty.').waitFor();
    expect(new URL(page.url()).searchParams.get('path')).toBe(path.join(deviceDir, 'reports'));
    await page.getByRole('navigation', { name: 'Directory' }).getByRole('button', { name: 'device', exact: true }).click();
    await fileRow('reports').waitFor();

    await fileRow('reports').getByRole('button', { name: 'Rename reports' }).click();
    const rename = page.getByRole('form', { name: 'New name for reports' });
    await rename.getByLabel('New name for reports').fill('archive');
    await rename.getByRole('button', { name: 'Rename' }).click();
    await fileRow('archive').waitFor();
    expect(await readdir(deviceDir)).toContain('archive');

    await fileRow('archive').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('group', { name: 'Delete the folder archive and everything in it?' }).getByRole('button', { name: 'Yes, delete' }).click();
    await fileRow('archive').waitFor({ state: 'detached' });
    expect(await readdir(deviceDir)).not.toContain('archive');
    expect(trouble).toEqual([]);
  });

  it('kills a `sleep` started here from the Processes tab, and the list no longer shows it', async () => {
    sleeper = spawn('sleep', ['4242'], { stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => sleeper!.once('exit', (_code, signal) => resolve(signal)));
    const pid = sleeper.pid!;
    await page.goto(`${server.url}/agents/${agent.id}/processes`);
    await page.getByTestId('process-row').first().waitFor({ timeout: 15_000 });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'device-processes-desktop.png') });
    expect(describeViolations(await axeViolations(page, BLOCKING)), 'axe on the Processes tab').toEqual([]);
    await page.getByLabel('Filter').fill(String(pid));
    const row = page.locator(`[data-testid="process-row"][data-pid="${pid}"]`);
    await row.waitFor({ timeout: 15_000 });
    expect(await row.textContent()).toContain('sleep');

    await row.getByRole('button', { name: 'Kill' }).click();
    await row.getByRole('button', { name: 'Yes, kill' }).click();
    expect(await exited).toBe('SIGTERM');
    await expect.poll(() => page.getByRole('status').filter({ hasText: `pid ${pid}` }).textContent()).toContain(`Sent TERM to sleep (pid ${pid})`);
    await vi.waitFor(
      async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        await page.getByRole('button', { name: 'Refresh' }).waitFor();
        expect(await row.count()).toBe(0);
      },
      { timeout: 15_000, interval: 500 },
    );
    expect(trouble).toEqual([]);
  });

  it('stops a service after a confirmation and starts it again, showing each result', async () => {
    await page.goto(`${server.url}/agents/${simulated.id}/services`);
    await page.getByTestId('service-row').first().waitFor({ timeout: 15_000 });
    await page.getByLabel('Filter').fill('chrony');
    const row = page.locator('[data-testid="service-row"][data-name="chrony"]');
    expect(await page.getByTestId('service-row').count()).toBe(1);
    expect(await row.textContent()).toContain('running');
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'device-services-desktop.png') });
    expect(describeViolations(await axeViolations(page, BLOCKING)), 'axe on the Services tab').toEqual([]);

    await row.getByRole('button', { name: 'Stop' }).click();
    await row.getByRole('button', { name: 'Yes, stop' }).click();
    await expect.poll(() => page.getByTestId('service-result').textContent()).toContain('stop chrony: now stopped.');
    expect(await row.textContent()).toContain('stopped');
    await row.getByRole('button', { name: 'Start chrony', exact: true }).click();
    await expect.poll(() => page.getByTestId('service-result').textContent()).toContain('start chrony: now running.');
    expect(await row.textContent()).toContain('running');
    // The list agrees after a fresh look at the device.
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => row.textContent()).toContain('running');
    expect(trouble).toEqual([]);
  });

  it('shows a read-only user the processes and services without their buttons, and no Shell or Files tab', async () => {
    const res = await server.app.inject({ method: 'POST', url: '/api/v1/users', headers: bearer(token), payload: { username: 'reader', password: 'reader-password-1', role: 'read', customer_ids: null } });
    expect(res.statusCode, res.body).toBe(201);
    const context = await page.context().browser()!.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const reader = await context.newPage();
      const readerTrouble = watchForTrouble(reader);
      await reader.goto(`${server.url}/`);
      await signIn(reader, 'reader', 'reader-password-1');
      await reader.getByTestId('count-online').waitFor();
      await reader.goto(`${server.url}/agents/${agent.id}/processes`);
      await reader.getByTestId('process-row').first().waitFor({ timeout: 15_000 });
      expect(await reader.getByRole('button', { name: 'Kill' }).count()).toBe(0);
      expect(await reader.getByLabel('Signal to send').count()).toBe(0);
      await reader.goto(`${server.url}/agents/${simulated.id}/services`);
      await reader.getByTestId('service-row').first().waitFor({ timeout: 15_000 });
      expect(await reader.getByRole('button', { name: /^(Start|Stop|Restart)/ }).count()).toBe(0);
      const tabs = reader.getByRole('navigation', { name: 'Agent sections' });
      expect(await tabs.getByRole('link', { name: 'Processes', exact: true }).count()).toBe(1);
      expect(await tabs.getByRole('link', { name: 'Shell', exact: true }).count()).toBe(0);
      expect(await tabs.getByRole('link', { name: 'Files', exact: true }).count()).toBe(0);
      expect(readerTrouble).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
