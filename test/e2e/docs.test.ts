// Swagger UI at /docs in headless Chromium under the app's Content-Security-Policy (issue 57, item 6):
// it renders, calls the API with "Try it out", and reports no CSP violation (a console error); a page
// of another origin cannot frame it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, watchForTrouble } from '../helpers/browser.js';
import { startLiveServer, type LiveServer } from '../helpers/live-agent.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/spawn-server.js';

describe('Swagger UI at /docs', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let server: LiveServer;
  let browser: Browser;
  let page: Page;
  let trouble: string[];

  beforeAll(async () => {
    server = await startLiveServer();
    browser = await launchBrowser();
    page = await browser.newPage();
    trouble = watchForTrouble(page);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('renders under the policy and calls the API from "Try it out", without a CSP violation', async () => {
    const answer = await page.goto(`${server.url}/docs`);
    expect(answer?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    await page.getByRole('heading', { name: /RMM backend API/ }).waitFor();
    // The first operation (signing in): sent with Swagger UI's example body, the server refuses it.
    const login = page.locator('.opblock', { has: page.locator('[data-path="/api/v1/auth/login"]') }).first();
    await login.locator('.opblock-summary').click();
    await login.getByRole('button', { name: 'Try it out' }).click();
    await login.getByRole('button', { name: 'Execute' }).click();
    await login.locator('.live-responses-table .response-col_status').filter({ hasText: '401' }).waitFor();
    // Chromium logs the refused request itself as a console error; nothing else may show up.
    expect(trouble).toEqual(['console error: Failed to load resource: the server responded with a status of 401 (Unauthorized)']);
  });

  it('cannot be framed by a page of another origin', async () => {
    const framing = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><iframe id="docs" src="${server.url}/docs/"></iframe>`);
    });
    await new Promise<void>((resolve) => framing.listen(0, '127.0.0.1', resolve));
    try {
      const other = await browser.newPage();
      const said: string[] = [];
      other.on('console', (msg) => said.push(msg.text()));
      await other.goto(`http://127.0.0.1:${(framing.address() as AddressInfo).port}/`, { waitUntil: 'load' }); // the frame's load included
      const frame = other.frames().find((f) => f !== other.mainFrame());
      // Refused: the frame shows the browser's error page, never Swagger UI.
      expect(frame).toBeDefined();
      expect(await frame!.locator('#swagger-ui').count()).toBe(0);
      expect(said.join('\n')).toMatch(/frame-ancestors 'none'/);
      await other.close();
    } finally {
      await new Promise((resolve) => framing.close(resolve));
    }
  });
});
