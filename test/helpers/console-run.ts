// One web console under test: the production build served by a live server (the real app on a port,
// reference agents available through it) and a headless Chromium page watched for trouble.
import type { Browser, Page } from 'playwright-core';
import type { TestAppOptions } from './app.js';
import { buildConsole, launchBrowser, signIn, watchForTrouble } from './browser.js';
import { startLiveServer, type LiveServer } from './live-agent.js';

export interface ConsoleRun {
  /** The console's production build, which the server serves (shared by the run's e2e files: read only). */
  webDir: string;
  server: LiveServer;
  page: Page;
  /** Page errors, console errors (a CSP violation is one) and dialogs so far: tests assert it stays empty. */
  trouble: string[];
  /** Opens the console, signs in (a user without two-factor sign-in) and waits for the fleet page. */
  signInToFleet(username: string, password: string): Promise<void>;
  close(): Promise<void>;
}

export async function startConsole(options: { server?: TestAppOptions; viewport?: { width: number; height: number } } = {}): Promise<ConsoleRun> {
  const webDir = await buildConsole();
  let server: LiveServer | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await server?.close();
  };
  try {
    server = await startLiveServer({ ...options.server, env: { ...options.server?.env, WEB_CONSOLE_DIR: webDir } });
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: options.viewport ?? { width: 1280, height: 900 } });
    const trouble = watchForTrouble(page);
    const live = server;
    return {
      webDir,
      server: live,
      page,
      trouble,
      signInToFleet: async (username, password) => {
        await page.goto(`${live.url}/`);
        await signIn(page, username, password);
        await page.getByTestId('count-online').waitFor();
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
