// Single sign-on through the console in headless Chromium against a real OpenID Connect provider
// (oidc-provider on a loopback port, test/helpers/test-idp.ts): an admin adds the provider on the
// settings page and sees the redirect URI to register; the first "Sign in with Contoso" creates the user
// with the mapped role and customer; the second finds the same user, and as Contoso reports MFA, no code
// is asked although the user has TOTP; a provider that does not report MFA gets the TOTP step; a
// stranger at a provider that may not create users is told so on the sign-in page.
import { generate } from 'otplib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsole, type ConsoleRun } from '../helpers/console-run.js';
import { freePort } from '../helpers/free-port.js';
import { adminToken, bearer, createCustomer } from '../helpers/identity.js';
import type { LiveServer } from '../helpers/live-agent.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/spawn-server.js';
import { startTestIdp, type TestIdp } from '../helpers/test-idp.js';

const ADMIN_PASSWORD = 'admin-password-1';
const SECRET = 'contoso-client-secret-4711';

describe('single sign-on in the console', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let run: ConsoleRun;
  let server: LiveServer;
  let page: Page;
  let trouble: string[];
  let idp: TestIdp;
  let issuer: string;
  let idpPort: number;
  let customerId: number;
  let annaId: number;
  let totpSecret: string;

  const signOut = async () => {
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    // A fresh browser session at the provider, so it asks who signs in again.
    await page.context().clearCookies();
  };
  const signedInAs = async (username: string) => {
    await page.getByTestId('count-online').waitFor({ timeout: 15_000 });
    expect(await page.getByRole('link', { name: username, exact: true }).count()).toBe(1);
  };
  const sessionToken = async () => (JSON.parse((await page.evaluate<string | null>("sessionStorage.getItem('rmm.session')")) ?? '{}') as { token: string }).token;

  beforeAll(async () => {
    run = await startConsole();
    ({ server, page, trouble } = run);
    const admin = await adminToken(server, 'admin', ADMIN_PASSWORD);
    customerId = (await createCustomer(server.app, admin, '20001', 'Bäckerei Sonnenschein GmbH')).id;
    idpPort = await freePort();
    issuer = `http://127.0.0.1:${idpPort}`;
    await run.signInToFleet('admin', ADMIN_PASSWORD);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(async () => {
    await run?.close();
    await idp?.close();
  });

  it('lets an admin add a provider and shows the redirect URI to register and the secret as a hint', async () => {
    await page.getByRole('link', { name: 'Settings', exact: true }).click();
    const sso = page.getByRole('region', { name: 'Single sign-on' });
    await sso.getByRole('button', { name: 'Add a provider' }).click();
    const form = page.getByRole('form', { name: 'Add a provider' });
    await form.getByLabel('Provider name').fill('Contoso');
    await form.getByLabel('Issuer URL').fill(issuer);
    await form.getByLabel('Client ID').fill('rmm-contoso');
    await form.getByLabel('Client secret').fill(SECRET);
    await form.getByLabel('Role claim (optional)').fill('groups');
    await form.getByRole('button', { name: 'Add mapping' }).click();
    await form.getByLabel('Mapping 1 value').fill('techs');
    await form.getByLabel('Mapping 1 role').selectOption('write');
    await form.getByLabel('Mapping 1 customer').selectOption(String(customerId));
    await form.getByLabel('Create users on their first sign-in').check();
    await form.getByRole('button', { name: 'Add provider' }).click();
    const card = sso.getByTestId('sso-provider').filter({ hasText: 'Contoso' });
    await card.waitFor({ timeout: 15_000 });
    const redirectUri = (await card.getByTestId('sso-redirect-uri').textContent()) ?? '';
    expect(redirectUri).toMatch(new RegExp(`^${server.url}/api/v1/auth/sso/\\d+/callback$`));
    expect(await card.textContent()).toContain(`…${SECRET.slice(-4)}`);
    expect(await sso.textContent()).not.toContain(SECRET);

    // A second provider, which does not report MFA and creates nobody (set up through the API).
    const plain = await server.app.inject({
      method: 'POST',
      url: '/api/v1/sso/providers',
      headers: bearer(await adminToken(server, 'admin', ADMIN_PASSWORD)),
      payload: { name: 'Plain', issuer, client_id: 'rmm-plain', client_secret: SECRET },
    });
    expect(plain.statusCode, plain.body).toBe(201);
    idp = await startTestIdp(idpPort, [
      { client_id: 'rmm-contoso', client_secret: SECRET, redirect_uris: [redirectUri] },
      // Under the address the browser uses (inject() came to "localhost", and PUBLIC_URL is not set).
      { client_id: 'rmm-plain', client_secret: SECRET, redirect_uris: [`${server.url}/api/v1/auth/sso/${plain.json<{ id: number }>().id}/callback`] },
    ]);
    idp.amrByClient = { 'rmm-contoso': ['pwd', 'mfa'], 'rmm-plain': ['pwd'] };
    idp.accounts.set('sub-anna', { preferred_username: 'Anna', groups: ['techs'] });
    await signOut();
  });

  it('creates the user with the mapped role and customer on the first sign-in', async () => {
    idp.next = { accountId: 'sub-anna', amr: [] };
    await page.getByRole('link', { name: 'Sign in with Contoso' }).click();
    await signedInAs('anna');
    // The ticket is gone from the address.
    expect(new URL(page.url()).hash).toBe('');
    const me = await server.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(await sessionToken()) });
    expect(me.json()).toMatchObject({ username: 'anna', role: 'write', customer_ids: [customerId] });
    annaId = me.json<{ id: number }>().id;

    // Anna turns on TOTP (through the API with her session; the account page's flow is tested elsewhere).
    const token = await sessionToken();
    totpSecret = (await server.app.inject({ method: 'POST', url: '/api/v1/auth/2fa/setup', headers: bearer(token), payload: {} })).json<{ secret: string }>().secret;
    const code = await generate({ secret: totpSecret, epoch: Math.floor(Date.now() / 1000) - 30 });
    const confirmed = await server.app.inject({ method: 'POST', url: '/api/v1/auth/2fa/confirm', headers: bearer(token), payload: { code } });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    await page.reload();
    await signOut();
  });

  it('finds the same user on the second sign-in; the provider reported MFA, so no code is asked', async () => {
    const users = async () => (await server.app.inject({ method: 'GET', url: '/api/v1/users', headers: bearer(await adminToken(server, 'admin', ADMIN_PASSWORD)) })).json<unknown[]>().length;
    const before = await users();
    await page.getByRole('link', { name: 'Sign in with Contoso' }).click();
    await signedInAs('anna');
    const me = await server.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(await sessionToken()) });
    expect(me.json<{ id: number }>().id).toBe(annaId);
    expect(await users()).toBe(before);
    await signOut();
  });

  it('asks for the TOTP code when the provider does not report MFA', async () => {
    // Plain creates nobody, but Anna's account there is the same (same issuer and subject).
    await page.getByRole('link', { name: 'Sign in with Plain' }).click();
    await page.getByLabel('Authentication code').fill(await generate({ secret: totpSecret }));
    await page.getByRole('button', { name: 'Verify' }).click();
    await signedInAs('anna');
    await signOut();
  });

  it('tells a stranger at a provider that creates nobody why they were not signed in', async () => {
    idp.accounts.set('sub-zed', { preferred_username: 'zed' });
    idp.next = { accountId: 'sub-zed', amr: [] };
    await page.getByRole('link', { name: 'Sign in with Plain' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor({ timeout: 15_000 });
    expect(await alert.textContent()).toBe('No user here is linked to this Plain account. Ask an administrator for access.');
    expect(trouble).toEqual([]);
  });
});
