// The console's terminal page in headless Chromium against the real server (issue 16): xterm.js over
// the terminal WebSocket with the console's strict CSP, a command typed and answered by the server's
// shell, the shell told the new size when the window changes, and the session's start and end in the
// audit page.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SCREENSHOT_DIR } from '../helpers/browser.js';
import { startConsole, type ConsoleRun } from '../helpers/console-run.js';
import { adminToken } from '../helpers/identity.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/spawn-server.js';
import { screenRows, typeCommand } from '../helpers/xterm-page.js';

const PASSWORD = 'admin-password-1';

describe('the console terminal', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let run: ConsoleRun;
  let page: Page;
  let trouble: string[];

  beforeAll(async () => {
    run = await startConsole({ server: { env: { TERMINAL_SHELL: '/bin/sh' } }, viewport: { width: 1280, height: 800 } });
    ({ page, trouble } = run);
    await adminToken(run.server, 'admin', PASSWORD);
    await run.signInToFleet('admin', PASSWORD);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(() => run?.close());

  it('runs `echo hi` in the server shell and shows the answer, with no CSP violation', async () => {
    await page.getByRole('link', { name: 'Terminal', exact: true }).click();
    await page.getByText('A shell on the RMM server').waitFor({ timeout: 15_000 });
    await typeCommand(page, 'echo hi', (row) => row === 'hi');
    // The prompt line shows what was typed, the next line only the shell's answer.
    expect((await screenRows(page)).some((row) => row.endsWith('echo hi'))).toBe(true);
    // True colour: xterm styles such cells itself, which the CSP must not refuse.
    await typeCommand(page, `printf '\\033[38;2;255;0;0mRED\\033[0m\\n'`, (row) => row === 'RED');
    const color = await page.evaluate(`getComputedStyle(Array.from(document.querySelectorAll('.xterm-rows span')).find((s) => s.textContent === 'RED')).color`);
    expect(color).toBe('rgb(255, 0, 0)');
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'terminal-desktop.png') });
    expect(trouble).toEqual([]);
  });

  it('tells the shell the new size when the window changes', async () => {
    const [, wideCols] = (await typeCommand(page, 'stty size', (row) => /^\d+ \d+$/.test(row))).split(' ').map(Number);
    await page.setViewportSize({ width: 390, height: 844 });
    await vi.waitFor(async () => expect(Number((await typeCommand(page, 'stty size', (row) => /^\d+ \d+$/.test(row) && Number(row.split(' ')[1]) < 50)).split(' ')[1])).toBeLessThan(50), { timeout: 20_000 });
    const [rows, cols] = (await screenRows(page)).filter((row) => /^\d+ \d+$/.test(row)).at(-1)!.split(' ').map(Number);
    expect(wideCols).toBeGreaterThan(100);
    expect(cols).toBeGreaterThan(20);
    // The rows the shell was told are the rows the page draws.
    expect(rows).toBe((await screenRows(page)).length);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'terminal-mobile.png') });

    // A phone has no Ctrl key: the page's own key bar interrupts a running command.
    expect(await page.getByRole('toolbar', { name: 'Terminal keys' }).isVisible()).toBe(true);
    await page.locator('.xterm-screen').click();
    await page.keyboard.type('sleep 600; echo not-interrupted');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Control-C' }).click();
    await typeCommand(page, 'echo after-interrupt', (row) => row === 'after-interrupt');
    expect((await screenRows(page)).some((row) => row === 'not-interrupted')).toBe(false);

    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await page.getByRole('toolbar', { name: 'Terminal keys' }).isVisible()).toBe(false);
  });

  it('ends the session when the page is left, and the audit page lists its start and end', async () => {
    await page.getByRole('link', { name: 'Audit', exact: true }).click();
    const actions = page.getByTestId('audit-row');
    await vi.waitFor(
      async () => {
        await page.reload();
        await actions.first().waitFor();
        const text = (await actions.allTextContents()).join('\n');
        expect(text).toContain('terminal.start');
        expect(text).toContain('terminal.end');
      },
      { timeout: 20_000, interval: 500 },
    );
    expect(trouble).toEqual([]);
  });

  it('says why when the shell exits, and starts a new session on request', async () => {
    await page.getByRole('link', { name: 'Terminal', exact: true }).click();
    await page.getByText('A shell on the RMM server').waitFor({ timeout: 15_000 });
    await page.locator('.xterm-screen').click();
    await page.keyboard.type('exit');
    await page.keyboard.press('Enter');
    await page.getByText('The shell has exited.').waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'New session' }).click();
    await page.getByText('A shell on the RMM server').waitFor({ timeout: 15_000 });
    await typeCommand(page, 'echo again-$((6 * 7))', (row) => row === 'again-42');
    expect(trouble).toEqual([]);
  });
});
