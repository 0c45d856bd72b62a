// Passkeys in the console with Chromium's virtual authenticator (issue 35, Build 3 acceptance): a user
// adds a passkey on the account page through the browser's real WebAuthn API, renames it, signs out and
// signs in again with the passkey as the second step; an admin turns on passwordless sign-in in the
// settings, and the passkey alone then signs in; finally the passkey is deleted after asking. WebAuthn
// needs a host name (browsers refuse IP addresses as RP IDs), so the console is opened at localhost,
// which is also the server's PUBLIC_URL: without one, the account page says passkeys cannot be added.
import type { CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOT_DIR, signIn } from '../helpers/browser.js';
import { startConsole, type ConsoleRun } from '../helpers/console-run.js';
import { freePort } from '../helpers/free-port.js';
import { seedUser } from '../helpers/identity.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/spawn-server.js';

const PASSWORD = 'pat-password-5';

describe('passkeys in the console', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let run: ConsoleRun;
  let page: Page;
  let trouble: string[];
  let cdp: CDPSession;
  let authenticatorId: string;
  let consoleUrl: string;

  const signOut = async () => {
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
  };
  const credentials = async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;

  beforeAll(async () => {
    const port = await freePort();
    consoleUrl = `http://localhost:${port}`;
    run = await startConsole({ server: { port, env: { PUBLIC_URL: consoleUrl } } });
    ({ page, trouble } = run);
    await seedUser(run.server, 'pat', PASSWORD);
    // A platform authenticator with user verification that answers at once, as a fingerprint reader would.
    cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    }));
    await page.goto(`${consoleUrl}/`);
    await signIn(page, 'pat', PASSWORD);
    await page.getByTestId('count-online').waitFor();
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(() => run?.close());

  it('adds a passkey on the account page and renames it', async () => {
    await page.getByRole('link', { name: 'pat' }).click();
    await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
    await page.getByText('No passkeys yet.').waitFor();
    await page.getByLabel('Passkey name').fill('Virtual key');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    const row = page.getByTestId('passkey-row').filter({ hasText: 'Virtual key' });
    await row.waitFor({ timeout: 15_000 });
    expect(await row.textContent()).toContain('never used');
    const held = await credentials();
    expect(held).toHaveLength(1);
    expect(held[0]).toMatchObject({ rpId: 'localhost', isResidentCredential: true });

    await row.getByRole('button', { name: 'Rename' }).click();
    await page.getByLabel('New name').fill('Desk key');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('passkey-row').filter({ hasText: 'Desk key' }).waitFor({ timeout: 15_000 });
    const stored = await run.server.db.db.selectFrom('passkeys').select(['name', 'credential_id']).execute();
    expect(stored).toEqual([{ name: 'Desk key', credential_id: held[0]!.credentialId.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '') }]);
  });

  it('signs in with the passkey as the second step after the password', async () => {
    await signOut();
    await signIn(page, 'pat', PASSWORD);
    // Pat has no authenticator app: the second step offers the passkey only.
    await page.getByRole('button', { name: 'Use a passkey' }).waitFor();
    expect(await page.getByLabel('Authentication code').count()).toBe(0);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('heading', { name: 'Passkeys' }).waitFor({ timeout: 15_000 });
    await expect.poll(async () => (await page.getByTestId('passkey-row').textContent()) ?? '', { timeout: 15_000 }).toContain('last used');
    expect((await credentials())[0]!.signCount).toBeGreaterThan(0);
  });

  it('signs in with the passkey alone once an admin allows it in the settings', async () => {
    await signOut();
    // Off by default: the sign-in page offers no passkey-only sign-in.
    await page.getByLabel('Username').waitFor();
    expect(await page.getByRole('button', { name: 'Sign in with a passkey' }).count()).toBe(0);
    await signIn(page, 'pat', PASSWORD);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Allow sign-in with a passkey alone').check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor({ timeout: 15_000 });
    await signOut();

    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor({ timeout: 15_000 });
    await page.getByRole('link', { name: 'pat' }).click();
    await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
    await page.screenshot({ path: `${SCREENSHOT_DIR}/console-passkeys.png`, fullPage: true });
    // Signing out ended the earlier sessions: the one left began with the passkey alone.
    expect(await run.server.db.db.selectFrom('user_sessions').select('method').execute()).toEqual([{ method: 'passkey' }]);
  });

  it('deletes the passkey after asking', async () => {
    const row = page.getByTestId('passkey-row').filter({ hasText: 'Desk key' });
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText('No passkeys yet.').waitFor({ timeout: 15_000 });
    expect(await run.server.db.db.selectFrom('passkeys').selectAll().execute()).toEqual([]);
    expect(trouble).toEqual([]);
  });
});

describe('passkeys in the console without PUBLIC_URL', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('says on the account page that passkeys cannot be added until PUBLIC_URL is set', async () => {
    const run = await startConsole();
    try {
      await seedUser(run.server, 'pat', PASSWORD);
      await run.page.goto(`${run.server.url.replace('127.0.0.1', 'localhost')}/`);
      await signIn(run.page, 'pat', PASSWORD);
      await run.page.getByTestId('count-online').waitFor();
      await run.page.getByRole('link', { name: 'pat' }).click();
      await run.page.getByRole('heading', { name: 'Passkeys' }).waitFor();
      await run.page.getByTestId('passkeys-unavailable').filter({ hasText: /cannot be added until the server's PUBLIC_URL is set/ }).waitFor();
      expect(await run.page.getByRole('button', { name: 'Add a passkey' }).count()).toBe(0);
      expect(run.trouble).toEqual([]);
    } finally {
      await run.close();
    }
  });
});
