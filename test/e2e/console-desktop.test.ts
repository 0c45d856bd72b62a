// The device's screen in the console (issue 60), with real parts only: Xvfb with an xterm, x11vnc on
// it listening on 127.0.0.1 with a VNC password, the reference agent on this machine, the real server
// with the production console, and Chromium. The Settings page sets the desktop's idle limit; the
// Remote desktop tab connects through the agent's tunnel with that limit, asks for the VNC password,
// draws the Xvfb root's colour in noVNC's canvas and types a command into the xterm that creates a file
// here; closing the browser tab closes the desktop tunnel within 5 s, and the audit log has the
// desktop's start and end.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SCREENSHOT_DIR } from '../helpers/browser.js';
import { startConsole, type ConsoleRun } from '../helpers/console-run.js';
import { adminToken, bearer, createKey } from '../helpers/identity.js';
import type { LiveAgent, LiveServer } from '../helpers/live-agent.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/spawn-server.js';
import { missingXTools, startXDesktop, type XDesktop } from '../helpers/x-desktop.js';

const PASSWORD = 'admin-password-1';
const missing = missingXTools();
// In CI the tools must be there (.ci/run installs them): a missing one fails the test instead.
const skip = missing.length > 0 && !process.env.CI;

describe.skipIf(skip)(`the agent's Remote desktop tab${skip ? ` (skipped: ${missing.join(', ')} not installed)` : ''}`, { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let run: ConsoleRun;
  let server: LiveServer;
  let page: Page;
  let trouble: string[];
  let agent: LiveAgent;
  let token: string;
  let desk: XDesktop;
  const marker = `/tmp/rmm-desk-${randomBytes(6).toString('hex')}`;

  const call = async (method: 'GET' | 'PUT', url: string, payload?: object) => {
    const res = await server.app.inject({ method, url: `/api/v1${url}`, headers: bearer(token), ...(payload ? { payload } : {}) });
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
    return res.json() as unknown;
  };
  const desktopTunnels = async () => ((await call('GET', `/agents/${agent.id}/tunnels`)) as Array<{ purpose: string }>).filter((t) => t.purpose === 'desktop');

  beforeAll(async () => {
    desk = await startXDesktop();
    run = await startConsole({ viewport: { width: 1280, height: 900 } });
    ({ server, page, trouble } = run);
    token = await adminToken(server, 'admin', PASSWORD);
    const key = (await createKey(server.app, bearer(token), 'agent')).key;
    agent = await server.startAgent(key, { name: 'desk-linux', hostname: 'desk-linux' });
    await run.signInToFleet('admin', PASSWORD);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(async () => {
    await run?.close();
    await desk?.stop();
    await rm(marker, { force: true });
  });

  it("sets the desktop's idle limit on the Settings page's Remote access form", async () => {
    await page.goto(`${server.url}/settings`);
    const form = page.getByRole('form', { name: 'Remote access' });
    await form.getByLabel('Close a remote desktop without input after (minutes)').fill('20');
    await form.getByRole('button', { name: 'Save remote-access settings' }).click();
    await form.getByText('Remote-access settings saved.').waitFor({ timeout: 15_000 });
    expect(await call('GET', '/settings')).toMatchObject({ remote_desktop_idle_minutes: 20, remote_launch_minutes: 60 });
  });

  it('points the agent at x11vnc and connects with the VNC password: the root colour is in the canvas', async () => {
    const target = (await call('PUT', `/agents/${agent.id}/remote-access`, { vnc_port: desk.vncPort })) as { vnc_host: string; vnc_port: number };
    expect(target).toMatchObject({ vnc_host: '127.0.0.1', vnc_port: desk.vncPort });

    await page.goto(`${server.url}/agents/${agent.id}/desktop`);
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    // x11vnc asks (-rfbauth): noVNC's credentialsrequired becomes the page's password field.
    await page.getByLabel('VNC password').fill(desk.password);
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await expect.poll(() => page.getByTestId('desktop-status').textContent(), { timeout: 20_000 }).toMatch(/^Connected/);
    // The idle limit set above is the one this desktop got.
    expect(await page.getByTestId('desktop-status').textContent()).toContain('after 20 minutes without keyboard or mouse input');

    // noVNC's canvas holds the framebuffer at its own size (1024×768), scaled by CSS into the page.
    await vi.waitFor(async () => expect(await colourShare(page, desk.rootColour.rgb)).toBeGreaterThan(0.2), { timeout: 20_000, interval: 250 });
    // Scaled to the window: the whole desktop is in view without scrolling.
    const shown = await page.getByTestId('desktop-screen').locator('canvas').boundingBox();
    expect(shown!.y + shown!.height).toBeLessThanOrEqual(page.viewportSize()!.height);
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'remote-desktop.png') });
    expect(await desktopTunnels()).toHaveLength(1);
    expect(trouble).toEqual([]);
  });

  it('types `touch <file>` into the xterm through noVNC, and the file appears on this machine', async () => {
    const canvas = page.getByTestId('desktop-screen').locator('canvas');
    const box = await canvas.boundingBox();
    if (!box) throw new Error('no canvas on the page');
    // The xterm sits at the top left (80×24 at +0+0): the pointer over it gives it the keyboard.
    await page.mouse.click(box.x + box.width * 0.15, box.y + box.height * 0.15);
    await page.keyboard.type(`touch ${marker}`, { delay: 20 });
    await page.keyboard.press('Enter');
    await vi.waitFor(() => expect(existsSync(marker)).toBe(true), { timeout: 15_000, interval: 200 });
    expect(trouble).toEqual([]);
  });

  it('closes the desktop tunnel within 5 s of the tab closing, and audits its start and end', async () => {
    await page.close();
    const closedAt = Date.now();
    await vi.waitFor(async () => expect(await desktopTunnels()).toEqual([]), { timeout: 5_000, interval: 100 });
    expect(Date.now() - closedAt).toBeLessThan(5_000);
    for (const action of ['device.desktop.start', 'device.desktop.end']) {
      await vi.waitFor(
        async () => {
          const entries = (await call('GET', `/audit?action=${action}`)) as Array<{ action: string }>;
          expect(entries.map((e) => e.action)).toContain(action);
        },
        { timeout: 5_000, interval: 200 },
      );
    }
  });
});

/** The share of the canvas's pixels within a JPEG's rounding of `rgb` (Tight encoding may send JPEG). */
async function colourShare(page: Page, rgb: [number, number, number]): Promise<number> {
  return page.getByTestId('desktop-screen').locator('canvas').evaluate((node, [r, g, b]) => {
    // The page's canvas, typed by shape: the tests compile without the DOM's types.
    const canvas = node as unknown as { width: number; height: number; getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } } };
    if (canvas.width === 0 || canvas.height === 0) return 0;
    const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let near = 0;
    for (let i = 0; i < data.length; i += 4) if (Math.abs(data[i]! - r) <= 8 && Math.abs(data[i + 1]! - g) <= 8 && Math.abs(data[i + 2]! - b) <= 8) near++;
    return near / (data.length / 4);
  }, rgb);
}
