// Headless Chromium for the web console's end-to-end tests: Debian's chromium driven by playwright-core
// (`.ci/run` installs it). The flags keep it from reaching out to the network this machine does not
// have, and each browser gets a fresh profile.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { build } from 'vite';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './spawn-server.js';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`);
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: FLAGS });
}

/**
 * The console (web/) built as `npm run build` would into dist/web, once per content: every e2e file of
 * a run shares one build, keyed by a hash of web/'s files and the lock file, in the temporary directory
 * (a build is ~20 s of CPU; sixteen of them were a good part of a CI pass). The first file to need it
 * builds while holding a lock directory; the others wait for it. Nobody deletes it: the next run with the
 * same sources reuses it, and a change of sources gets a new directory.
 * Vite keeps an existing NODE_ENV, and vitest sets it to `test`, which would build React's development
 * code (half again as big, and slower): the production build is what users get, so it is what is tested.
 */
export async function buildConsole(): Promise<string> {
  const finalDir = path.join(os.tmpdir(), `rmm-web-${await consoleSourceHash()}`);
  const lockDir = `${finalDir}.lock`;
  for (let waited = 0; ; waited += 250) {
    if (existsSync(path.join(finalDir, 'index.html'))) return finalDir;
    try {
      await mkdir(lockDir);
      break;
    } catch {
      // Another file is building it; a lock older than the longest build is left over from a killed run.
      const age = Date.now() - (await stat(lockDir).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
      if (age > 180_000) await rm(lockDir, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    if (existsSync(path.join(finalDir, 'index.html'))) return finalDir;
    const outDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-web-build-'));
    await viteBuild(outDir);
    await rm(finalDir, { recursive: true, force: true });
    await rename(outDir, finalDir);
    return finalDir;
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}

async function viteBuild(outDir: string): Promise<void> {
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({
      root: path.join(ROOT, 'web'),
      configFile: path.join(ROOT, 'web', 'vite.config.ts'),
      mode: 'production',
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true },
    });
  } finally {
    process.env.NODE_ENV = nodeEnv;
  }
}

/** SHA-256 over every file of web/ (path and content) and the lock file: what the build is made of. */
async function consoleSourceHash(): Promise<string> {
  const hash = createHash('sha256');
  const webRoot = path.join(ROOT, 'web');
  const files = (await readdir(webRoot, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
  for (const file of [...files, path.join(ROOT, 'package-lock.json')]) {
    hash.update(path.relative(ROOT, file)).update('\0').update(await readFile(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/** Where the e2e run leaves its screenshots (docs/console.md's come from `E2E_SCREENSHOT_DIR=docs/screenshots`). */
export const SCREENSHOT_DIR = path.resolve(ROOT, process.env.E2E_SCREENSHOT_DIR ?? 'test-results/screenshots');

/**
 * Everything the page reports that a user would call broken: uncaught errors, console errors (a CSP
 * violation is one) and dialogs (an injected `alert` would be one). Tests assert it stays empty.
 */
export function watchForTrouble(page: Page): string[] {
  const trouble: string[] = [];
  page.on('pageerror', (err) => trouble.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') trouble.push(`console error: ${msg.text()}`);
  });
  page.on('dialog', (dialog) => {
    trouble.push(`dialog: ${dialog.type()} ${dialog.message()}`);
    void dialog.dismiss();
  });
  return trouble;
}

/** The sign-in form's first step, as a user fills it (a TOTP step may follow). */
export async function signIn(page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}
