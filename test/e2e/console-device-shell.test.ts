// A shell on an agent from the console (issue 59), in headless Chromium against the real server and a
// reference agent on this machine: the Shell tab answers `echo $((6*7))` with 42, follows the window's
// size (`stty size`), says so when the session is closed and reconnects on request; the Recordings tab
// lists the session, plays the recording back in the page (asciinema-player under the console's CSP)
// with the 42 on its screen, and hands over the asciicast file. An agent that offers no shell shows no
// Shell tab, and a link to it says why.
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { axeViolations, BLOCKING, describeViolations } from '../helpers/axe.js';
import { SCREENSHOT_DIR } from '../helpers/browser.js';
import { startConsole, type ConsoleRun } from '../helpers/console-run.js';
import { startDeviceAgent } from '../helpers/device-agent.js';
import { adminToken, bearer, createKey } from '../helpers/identity.js';
import type { LiveAgent, LiveServer } from '../helpers/live-agent.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/spawn-server.js';
import { isSttySize, screenRows, typeCommand } from '../helpers/xterm-page.js';

const PASSWORD = 'admin-password-1';

describe('the agent Shell and Recordings tabs', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let run: ConsoleRun;
  let server: LiveServer;
  let page: Page;
  let trouble: string[];
  let agent: LiveAgent;
  let token: string;
  let downloads: string;

  beforeAll(async () => {
    run = await startConsole({ viewport: { width: 1280, height: 900 } });
    ({ server, page, trouble } = run);
    token = await adminToken(server, 'admin', PASSWORD);
    const key = (await createKey(server.app, bearer(token), 'agent')).key;
    agent = await startDeviceAgent(server, token, key, { name: 'dev-shell', hostname: 'dev-shell' }, ['shell']);
    downloads = await mkdtemp(path.join(os.tmpdir(), 'rmm-e2e-shell-'));
    await run.signInToFleet('admin', PASSWORD);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(async () => {
    await run?.close();
    if (downloads) await rm(downloads, { recursive: true, force: true });
  });

  const status = () => page.getByTestId('shell-status');

  /** The Recordings tab once it lists `count` shell sessions, all ended (so their recordings are complete). */
  const endedSessions = async (count: number) => {
    await page.getByRole('link', { name: 'Recordings', exact: true }).click();
    const rows = page.getByTestId('session-row');
    await vi.waitFor(
      async () => {
        await page.reload();
        await rows.first().waitFor({ timeout: 10_000 });
        expect(await page.locator('[data-testid="session-row"][data-kind="shell"]').count()).toBe(count);
        expect((await rows.allTextContents()).join('\n')).not.toContain('still open');
      },
      { timeout: 20_000, interval: 500 },
    );
    return rows;
  };

  it('runs `echo $((6*7))` on the agent and shows 42, with no CSP violation', async () => {
    await page.goto(`${server.url}/agents/${agent.id}/shell`);
    await expect.poll(() => status().textContent(), { timeout: 15_000 }).toContain('A shell on the agent');
    await typeCommand(page, 'echo $((6*7))', (row) => row === '42');
    expect((await screenRows(page)).some((row) => row.endsWith('echo $((6*7))'))).toBe(true);
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'device-shell-desktop.png') });
    expect(describeViolations(await axeViolations(page, BLOCKING)), 'axe on the Shell tab').toEqual([]);
    expect(trouble).toEqual([]);
  });

  it('tells the shell the new size when the window changes', async () => {
    const [, wideCols] = (await typeCommand(page, 'stty size', isSttySize)).split(' ').map(Number);
    expect(wideCols).toBeGreaterThan(100);
    await page.setViewportSize({ width: 700, height: 700 });
    await vi.waitFor(
      async () => {
        const row = await typeCommand(page, 'stty size', (r) => isSttySize(r) && Number(r.split(' ')[1]) < wideCols!);
        expect(Number(row.split(' ')[1])).toBeLessThan(wideCols!);
      },
      { timeout: 20_000 },
    );
    const [rows, cols] = (await screenRows(page)).filter(isSttySize).at(-1)!.split(' ').map(Number);
    expect(cols).toBeGreaterThan(20);
    // The rows the shell was told are the rows the pane draws.
    expect(rows).toBe((await screenRows(page)).length);
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('says so when the session is closed, and reconnects to a new shell', async () => {
    await page.getByRole('button', { name: 'Close session' }).click();
    await expect.poll(() => status().textContent()).toBe('You closed the session.');
    await page.getByRole('button', { name: 'Reconnect' }).click();
    await expect.poll(() => status().textContent(), { timeout: 15_000 }).toContain('A shell on the agent');
    await typeCommand(page, 'echo again-$((6 * 7))', (row) => row === 'again-42');
    // The shell's own end reads as such.
    await page.locator('.xterm-screen').click();
    await page.keyboard.type('exit');
    await page.keyboard.press('Enter');
    await expect.poll(() => status().textContent(), { timeout: 15_000 }).toBe('The shell has exited.');
    expect(trouble).toEqual([]);
  });

  it('lists the sessions under Recordings and plays the first one back with its 42', async () => {
    const rows = await endedSessions(2);
    // Newest first: the first session (echo 42, stty) is the second row.
    const first = rows.nth(1);
    expect(await first.textContent()).toContain('admin');
    await first.getByRole('button', { name: /^Play/ }).click();
    const player = page.getByTestId('recording-player');
    await vi.waitFor(
      async () => {
        const lines = (await player.locator('.ap-line').allTextContents()).map((line) => line.replace(/\u00a0/g, ' ').trim());
        expect(lines).toContain('42');
      },
      { timeout: 30_000, interval: 100 },
    );
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'device-recording-desktop.png') });
    expect(describeViolations(await axeViolations(page, BLOCKING)), 'axe on the Recordings tab with the player').toEqual([]);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download recording' }).click()]);
    const saved = path.join(downloads, download.suggestedFilename());
    await download.saveAs(saved);
    const [header, ...events] = (await readFile(saved, 'utf8')).trim().split('\n');
    expect(JSON.parse(header!)).toMatchObject({ version: 2 });
    expect(events.some((line) => (JSON.parse(line) as [number, string, string])[2].includes('42'))).toBe(true);
    expect(trouble).toEqual([]);
  });

  it('records no new shell once the Settings page turns recording off', async () => {
    await page.goto(`${server.url}/settings`);
    const form = page.getByRole('form', { name: 'Device sessions' });
    await form.getByLabel('Record device shells').uncheck();
    await form.getByRole('button', { name: 'Save device settings' }).click();
    await form.getByText('Device settings saved.').waitFor({ timeout: 15_000 });
    const settings = await server.app.inject({ method: 'GET', url: '/api/v1/settings', headers: bearer(token) });
    expect(settings.json<{ device_recording: boolean }>().device_recording).toBe(false);

    await page.goto(`${server.url}/agents/${agent.id}/shell`);
    await expect.poll(() => status().textContent(), { timeout: 15_000 }).toContain('A shell on the agent');
    await typeCommand(page, 'echo unrecorded-$((6*7))', (row) => row === 'unrecorded-42');
    await page.getByRole('button', { name: 'Close session' }).click();
    const rows = await endedSessions(3);
    // Newest first: no Play for the unrecorded session, Play for the two before it.
    expect(await rows.first().getByRole('button', { name: /^Play/ }).count()).toBe(0);
    expect(await rows.first().textContent()).toContain('none');
    expect(await page.getByRole('button', { name: /^Play/ }).count()).toBe(2);
    expect(trouble).toEqual([]);
  });

  it('shows no Shell tab for an agent that offers none, and says why on a link to it', async () => {
    const key = (await createKey(server.app, bearer(token), 'agent')).key;
    const plain = await server.register(key, 'old-agent');
    await page.goto(`${server.url}/agents/${plain}/overview`);
    await page.getByTestId('not-offered').waitFor();
    expect(await page.getByRole('navigation', { name: 'Agent sections' }).getByRole('link', { name: 'Shell', exact: true }).count()).toBe(0);
    await page.goto(`${server.url}/agents/${plain}/shell`);
    await page.getByText('This agent does not offer a shell').waitFor();
    expect(trouble).toEqual([]);
  });
});
