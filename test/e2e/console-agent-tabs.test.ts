// The agent page's other tabs in headless Chromium, against the real server and two reference agents (a
// firewall sending the fixture's system data with a hostile service name, and a hypervisor host with
// its simulated guests): the agents list, the overview panels, a guest started from its row, the events
// list and its filter, a WireGuard peer added (config and QR code shown once) and deleted, and the
// session's end.
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn } from '../helpers/browser.js';
import { startConsole, type ConsoleRun } from '../helpers/console-run.js';
import { fixtureText } from '../helpers/fixtures.js';
import { adminToken, bearer, createKey } from '../helpers/identity.js';
import type { LiveAgent, LiveServer } from '../helpers/live-agent.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/spawn-server.js';

const PASSWORD = 'admin-password-1';
const HOSTILE_SERVICE = '<script>alert("svc")</script>';

describe('the agent page tabs with live agents', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let run: ConsoleRun;
  let server: LiveServer;
  let page: Page;
  let trouble: string[];
  let firewall: LiveAgent;
  let hypervisor: LiveAgent;
  let token: string;

  beforeAll(async () => {
    run = await startConsole();
    ({ server, page, trouble } = run);
    token = await adminToken(server, 'admin', PASSWORD);
    const key = (await createKey(server.app, bearer(token), 'agent')).key;
    const { agent_id: _id, platform: _platform, ...fixture } = JSON.parse(fixtureText('heartbeat-freebsd.json')) as Record<string, unknown>;
    const services = [{ name: HOSTILE_SERVICE, description: 'hostile', running: false }, ...(fixture.services as unknown[])];
    // Two certificates whose agent-side count is wrong (seen in the field: 30 days left for one valid
    // 50 more days): the console must count from valid_to.
    const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
    const certificates = [
      ...(fixture.certificates as unknown[]),
      { name: 'cert-soon', subject: 'CN=soon.example.lan', issuer: 'CN=Internal CA', valid_to: inDays(10.5), days_remaining: 300, in_use: true },
      { name: 'cert-far', subject: 'CN=far.example.lan', issuer: 'CN=Internal CA', valid_to: inDays(200.5), days_remaining: 3, in_use: true },
    ];
    firewall = await server.startAgent(key, {
      name: 'fw-tabs',
      hostname: 'fw-tabs.example',
      platform: 'freebsd',
      collectSystem: () => ({ ...fixture, services, certificates }),
    });
    hypervisor = await server.startAgent(key, { name: 'pve-tabs', hostname: 'pve-tabs', platform: 'linux', heartbeatIntervalMs: 1000 });
    await run.signInToFleet('admin', PASSWORD);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(() => run?.close());

  const guestStatus = async (agentId: string, name: string) => {
    const res = await server.app.inject({ method: 'GET', url: `/api/v1/agents/${agentId}`, headers: bearer(token) });
    const guests = (res.json() as { system: { hypervisor?: { guests?: Array<{ name: string; status: string }> } } }).system.hypervisor?.guests ?? [];
    return guests.find((g) => g.name === name)?.status;
  };
  const open = (agent: LiveAgent, tab: string) => page.goto(`${server.url}/agents/${agent.id}/${tab}`);
  const panel = (title: string) => page.getByRole('region', { name: title, exact: true });

  it('lists agents with search, status filter and sorting in the URL, and pre-registers one', async () => {
    await page.goto(`${server.url}/agents`);
    const names = () => page.getByTestId('agent-row').locator('td[data-column="name"]').allTextContents();
    await expect.poll(names, { timeout: 15_000 }).toEqual(['fw-tabs', 'pve-tabs']);
    expect(await page.title()).toBe('Agents · RMM');
    await page.getByRole('button', { name: /^Name( ▲| ▼)?$/ }).click();
    await expect.poll(names).toEqual(['pve-tabs', 'fw-tabs']);
    expect(new URL(page.url()).searchParams.get('dir')).toBe('desc');
    await page.getByLabel('Search').fill('pve');
    await expect.poll(names).toEqual(['pve-tabs']);

    const form = page.getByRole('form', { name: 'Pre-register an agent' });
    await form.getByLabel('Name').fill('fw-coming-soon');
    await form.getByRole('button', { name: 'Pre-register' }).click();
    await expect.poll(() => form.getByRole('status').textContent(), { timeout: 15_000 }).toContain('Pre-registered fw-coming-soon');
    // The same name again: the conflict in plain words, and the earlier success no longer beside it.
    await form.getByLabel('Name').fill('fw-coming-soon');
    await form.getByRole('button', { name: 'Pre-register' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).not.toMatch(/CONFLICT|request [0-9a-f-]{36}/);
    expect(await alert.getAttribute('title')).toMatch(/^Request [0-9a-f-]{36}$/);
    expect(await form.getByRole('status').count()).toBe(0);
    // Chromium logs the 409 answer itself; expected here, so it is not counted as trouble at the end.
    await expect.poll(() => trouble.findIndex((t) => t.includes('status of 409'))).toBeGreaterThanOrEqual(0);
    trouble.splice(trouble.findIndex((t) => t.includes('status of 409')), 1);
    await page.getByLabel('Search').fill('');
    await page.getByLabel('Status').selectOption('unknown');
    await expect.poll(names).toEqual(['fw-coming-soon']);
    expect(new URL(page.url()).searchParams.get('status')).toBe('unknown');
  });

  it("shows the firewall's system data as panels, agent strings as text", async () => {
    await open(firewall, 'overview');
    await panel('System').waitFor();
    // The browser tab names the agent and the tab, not just the product.
    await expect.poll(() => page.title()).toBe('fw-tabs · Overview · RMM');
    expect(await panel('System').textContent()).toContain('OPNsense 25.7.8');
    expect(await panel('Gateways').textContent()).toContain('WAN_DHCP');
    expect(await panel('Updates').textContent()).toContain('Version 25.7.9 available');
    expect(await panel('WireGuard servers').textContent()).toContain('ALWAYSON_VPN');
    expect(await panel('Certificates').textContent()).toContain('CN=host0.example.lan');
    const certificate = (name: string) => panel('Certificates').locator('tbody tr').filter({ hasText: name }).textContent();
    expect(await certificate('cert-soon')).toContain('10 days left');
    expect(await certificate('cert-far')).not.toContain('days left');
    expect(await panel('Plugins').textContent()).toContain('os-wireguard');
    // Stopped services first, so the hostile one (stopped) leads the list, as text.
    expect(await panel('Services').locator('tbody tr').first().textContent()).toContain(HOSTILE_SERVICE);
    expect(await page.locator('script:not([src])').count()).toBe(0);
  });

  it('starts a stopped guest from its row and shows it running after the next heartbeat', async () => {
    await open(hypervisor, 'overview');
    const row = panel('Guests and containers').locator('tbody tr').filter({ hasText: 'vm-file-1' });
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain('stopped');
    await row.getByRole('button', { name: 'Start' }).click();
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain('Done');
    expect(hypervisor.commands).toContain('hypervisor_action');
    // The new state arrives with the agent's next heartbeat; the page shows it once it has been stored.
    await expect.poll(() => guestStatus(hypervisor.id, 'vm-file-1'), { timeout: 15_000 }).toBe('running');
    await page.reload();
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain('running');
  });

  it('lists the agent events and filters them by type', async () => {
    await open(firewall, 'events');
    const table = page.getByTestId('events-table');
    await expect.poll(() => table.textContent(), { timeout: 15_000 }).toContain('connected');
    await page.getByLabel('Type').selectOption('offline');
    await expect.poll(() => page.getByText('No offline events.').count()).toBe(1);
    expect(new URL(page.url()).searchParams.get('type')).toBe('offline');
  });

  it('adds a WireGuard peer, shows its config once with a QR code, and deletes it', async () => {
    await open(firewall, 'vpn');
    await page.getByLabel('Name', { exact: true }).fill('Laptop Anna');
    await page.getByRole('button', { name: 'Add peer' }).click();
    const config = page.getByTestId('client-config');
    await config.waitFor({ timeout: 15_000 });
    const text = await config.textContent();
    expect(text).toContain('[Interface]');
    expect(text).toMatch(/PrivateKey = [A-Za-z0-9+/]{43}=/);
    expect(await config.locator('svg.qr-code rect').count()).toBeGreaterThan(100);
    const row = page.getByTestId('vpn-peer-row').filter({ hasText: 'Laptop Anna' });
    await row.waitFor({ timeout: 15_000 });
    const [download] = await Promise.all([page.waitForEvent('download'), config.getByRole('button', { name: 'Download .conf' }).click()]);
    expect(download.suggestedFilename()).toMatch(/\.conf$/);
    expect(await readFile(await download.path(), 'utf8')).toContain('[Peer]');
    // Closing forgets the private key, so it asks first.
    await config.getByRole('button', { name: 'Close' }).click();
    await config.getByRole('button', { name: 'Yes, close' }).click();
    expect(await page.getByTestId('client-config').count()).toBe(0);

    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await expect.poll(() => page.getByText('No WireGuard peers on this firewall.').count(), { timeout: 15_000 }).toBe(1);
  });

  it('ends the session with a message when the token stops working, and on sign-out', async () => {
    await page.evaluate(`(() => { const s = JSON.parse(sessionStorage.getItem('rmm.session')); sessionStorage.setItem('rmm.session', JSON.stringify({ ...s, token: 'not-a-token' })); })()`);
    await page.reload();
    await expect.poll(() => page.getByRole('status').textContent(), { timeout: 15_000 }).toContain('Your session has ended');
    await signIn(page, 'admin', PASSWORD);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('You have signed out.');
  });

  it('met no page errors, CSP violations or dialogs', () => {
    // The deliberate bad token above answers 401 once; the browser reports that failed fetch as a console error.
    expect(trouble.filter((t) => !t.includes('401 (Unauthorized)'))).toEqual([]);
  });
});
