// The console's terminal page when the server could not load its PTY module (issue 56): the page says
// the terminal is unavailable and why, in the server's words, instead of a generic refusal; the rest of
// the console works. The page asks GET /terminal/status before it opens a socket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsole, type ConsoleRun } from '../helpers/console-run.js';
import { adminToken } from '../helpers/identity.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/spawn-server.js';

const PASSWORD = 'admin-password-1';
// A real failed import of a package that is not installed, as the library's missing binary package is.
const missingBinary = () => import(['@lydell', 'node-pty-not-installed'].join('/'));

describe('the console terminal without a PTY module', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let run: ConsoleRun;

  beforeAll(async () => {
    run = await startConsole({ server: { loadPty: missingBinary } });
    await adminToken(run.server, 'admin', PASSWORD);
    await run.signInToFleet('admin', PASSWORD);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(() => run?.close());

  it('says the terminal is unavailable and why, and the other pages still work', async () => {
    const { page, trouble } = run;
    await page.getByRole('link', { name: 'Terminal', exact: true }).click();
    const status = page.getByRole('status').filter({ hasText: 'unavailable' });
    await status.waitFor({ timeout: 15_000 });
    expect(await status.textContent()).toMatch(/^The terminal is unavailable on this server: the PTY module could not be loaded \(.*node-pty-not-installed.*\)\.$/);
    // The page asked GET /terminal/status first and opened no socket: nothing in the browser's log.
    expect(trouble).toEqual([]);
    await page.getByRole('link', { name: 'Customers', exact: true }).click();
    await page.getByRole('heading', { name: 'Customers' }).waitFor();
  });
});
