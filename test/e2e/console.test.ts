// The web console as a technician uses it, in headless Chromium against the real server with the
// project's reference agent connected over its real WebSocket: sign-in with 2FA, the fleet page, a
// metrics chart drawn from real samples, two backups and their diff, a command's output, a tunnel
// opened (with who may connect), used and closed. The agent's hostname is hostile HTML, which must show
// as text everywhere.
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { generate } from 'otplib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedSystem } from '../../src/fleet/simulated-system.js';
import { SCREENSHOT_DIR, signIn } from '../helpers/browser.js';
import { startConsole, type ConsoleRun } from '../helpers/console-run.js';
import { adminToken, apiKey, bearer, createKey } from '../helpers/identity.js';
import type { LiveServer } from '../helpers/live-agent.js';
import { ShiftedClock } from '../helpers/shifted-clock.js';
import { PROCESS_TEST_TIMEOUT_MS, ROOT } from '../helpers/spawn-server.js';
import { connect, exchange, TunnelTargets } from '../helpers/tunnels.js';

const HOSTILE = '<img src=x onerror=alert(1)>';
const PASSWORD = 'admin-password-1';
const HISTORY_MINUTES = 120;

describe('the web console with a live agent', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  const clock = new ShiftedClock();
  const targets = new TunnelTargets();
  let run: ConsoleRun;
  let workDir: string;
  let backupFile: string;
  let server: LiveServer;
  let page: Page;
  let trouble: string[];
  let secret: string;
  let agentId: string;

  const totpNow = () => generate({ secret, epoch: Math.floor(clock.now().getTime() / 1000) });
  const agentPage = (tab: string, query = '') => page.goto(`${server.url}/agents/${agentId}/${tab}${query}`);

  beforeAll(async () => {
    run = await startConsole({ server: { clock } });
    ({ server, page, trouble } = run);
    workDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-console-e2e-'));
    backupFile = path.join(workDir, 'config.xml');
    await copyFile(path.resolve(ROOT, '../shared/fixtures/opnsense-config.xml'), backupFile);
    const token = await adminToken(server, 'admin', PASSWORD);
    secret = await enableTwoFactor(server, token, clock);
    const key = (await createKey(server.app, bearer(token), 'agent')).key;
    agentId = await registerFirewall(server, key);
    const system = new SimulatedSystem('freebsd', HOSTILE, mulberry(7), Date.now() - HISTORY_MINUTES * 60_000);
    await sendHistory(server, key, agentId, system, clock);
    await server.startAgent(key, { agentId, name: 'fw-e2e', hostname: HOSTILE, platform: 'freebsd', backupFile, collectSystem: () => system.collect(null) as Record<string, unknown> });
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(async () => {
    await run?.close();
    await targets.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('signs in with password and TOTP code, and the fleet page shows the agent online', async () => {
    await page.goto(`${server.url}/`);
    await signIn(page, 'admin', PASSWORD);
    await page.getByLabel('Authentication code').fill(await totpNow());
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => page.getByTestId('count-online').locator('strong').textContent(), { timeout: 15_000 }).toBe('1');
    // Listed under attention (the simulated firewall reports updates: in the collapsed updates line,
    // or the ranked table once its certificate nears expiry), with its hostname as plain text.
    const row = page.locator('[data-testid="attention"], [data-testid="attention-updates-table"]').locator('tbody tr').filter({ hasText: 'fw-e2e' });
    await expect.poll(() => row.textContent()).toContain(HOSTILE);
  });

  it('shows the hostile hostname as text on the agents list and the agent page, never as an element', async () => {
    await page.getByRole('link', { name: 'Agents', exact: true }).click();
    const row = page.getByTestId('agent-row').filter({ hasText: 'fw-e2e' });
    await expect.poll(() => row.textContent()).toContain(HOSTILE);
    await agentPage('overview');
    await page.getByRole('heading', { name: 'fw-e2e' }).waitFor();
    expect(await page.locator('.agent-facts').textContent()).toContain(HOSTILE);
    expect(await page.locator('img[src="x"]').count()).toBe(0);
  });

  it("draws the metrics charts from the agent's samples", async () => {
    await agentPage('metrics');
    const cpu = page.getByTestId('chart-cpu_usage');
    await cpu.locator('canvas').waitFor({ timeout: 15_000 });
    expect(await cpu.getByText('No samples').count()).toBe(0);
    await page.getByTestId('chart-interface_bps').locator('canvas').waitFor();
    // An agent with minutes of data opens on the last hour, not on 24 hours of mostly nothing.
    expect(await page.getByRole('button', { name: '1 h' }).getAttribute('aria-pressed')).toBe('true');
    await expect.poll(() => page.locator('[aria-busy="true"]').count()).toBe(0);
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'agent-metrics.png'), fullPage: true });
    // The range buttons ask the server again and keep a choice other than the opening one in the URL.
    await page.getByRole('button', { name: '24 h' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('range')).toBe('24h');
    await cpu.locator('canvas').waitFor();
    await page.getByRole('button', { name: '1 h' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('range')).toBe(null);
    await cpu.locator('canvas').waitFor();
  });

  it('takes two backups and shows the diff between them', async () => {
    await agentPage('backups');
    await expect.poll(() => page.title()).toBe('fw-e2e · Backups · RMM');
    await page.getByRole('button', { name: 'Take backup now' }).click();
    await expect.poll(() => page.getByTestId('backup-row').count(), { timeout: 15_000 }).toBe(1);
    const config = await readFile(backupFile, 'utf8');
    await writeFile(backupFile, config.replace('  </system>', '    <motd>changed by the console e2e</motd>\n  </system>'));
    await page.getByRole('button', { name: 'Take backup now' }).click();
    await expect.poll(() => page.getByTestId('backup-row').count(), { timeout: 15_000 }).toBe(2);
    const diff = page.getByTestId('backup-diff');
    await expect.poll(() => diff.locator('tr.diff-add').allTextContents(), { timeout: 15_000 }).toEqual([expect.stringContaining('<motd>changed by the console e2e</motd>')]);
    await diff.getByRole('button', { name: 'Side by side' }).click();
    await expect.poll(() => diff.textContent()).toContain('changed by the console e2e');
  });

  it("runs a command and shows the agent's output", async () => {
    await agentPage('actions');
    await page.getByLabel('Command', { exact: true }).fill('echo console-e2e-$((6 * 7))');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await expect.poll(() => page.getByTestId('exec-stdout').textContent(), { timeout: 15_000 }).toContain('console-e2e-42');
    expect(await page.getByTestId('exec-result').textContent()).toContain('Exit code 0');
  });

  it('opens a tunnel, carries bytes through its proxy port, and closes it', async () => {
    const echoPort = await targets.echo();
    await agentPage('tunnels');
    await page.getByLabel('Target host').fill('127.0.0.1');
    await page.getByLabel('Target port').fill(String(echoPort));
    await page.getByLabel('Who may connect to the proxy port (optional)').fill('127.0.0.1, 127.0.0.2');
    await page.getByRole('button', { name: 'Open tunnel' }).click();
    const card = page.getByTestId('tunnel-row');
    await card.waitFor({ timeout: 15_000 });
    expect(await card.textContent()).toContain(`127.0.0.1:${echoPort}`);
    // Whose it is and who may connect; the CLI must sign in as its opener, so the command takes a token.
    expect(await card.locator('dd', { hasText: 'you (admin)' }).count()).toBe(1);
    expect(await card.locator('dd', { hasText: '127.0.0.1, 127.0.0.2' }).count()).toBe(1);
    expect(await card.locator('.connect-command-text').textContent()).toMatch(/^RMM_TOKEN=\.\.\. npm run cli -- tunnel connect /);
    const proxyPort = Number(await card.locator('.tunnel-port strong').textContent());
    const echoed = await exchange(await connect(proxyPort), Buffer.from('through the console tunnel'));
    expect(echoed.toString()).toBe('through the console tunnel');

    await card.getByRole('button', { name: 'Close' }).click();
    await card.getByRole('button', { name: 'Yes, close' }).click();
    await expect.poll(() => page.getByTestId('tunnel-row').count(), { timeout: 15_000 }).toBe(0);
    await expect.poll(() => page.getByText('No tunnels are open to this agent.').count()).toBe(1);
  });

  it('met no page errors, CSP violations or dialogs (an injected alert would be one)', () => {
    expect(trouble).toEqual([]);
  });
});

/** Turns TOTP on for the admin with a code of a minute ago, so the browser's current code is a later, unused step. */
async function enableTwoFactor(server: LiveServer, token: string, clock: ShiftedClock): Promise<string> {
  const post = (url: string, payload: Record<string, unknown>) => server.app.inject({ method: 'POST', url: `/api/v1${url}`, headers: bearer(token), payload });
  const setup = await post('/auth/2fa/setup', {});
  expect(setup.statusCode, setup.body).toBe(200);
  const { secret } = setup.json() as { secret: string };
  clock.offsetMs = -60_000;
  try {
    const confirm = await post('/auth/2fa/confirm', { code: await generate({ secret, epoch: Math.floor(clock.now().getTime() / 1000) }) });
    expect(confirm.statusCode, confirm.body).toBe(200);
  } finally {
    clock.offsetMs = 0;
  }
  return secret;
}

async function registerFirewall(server: LiveServer, key: string): Promise<string> {
  const res = await server.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(key), payload: { hostname: HOSTILE, name: 'fw-e2e', platform: 'freebsd' } });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { agent_id: string }).agent_id;
}

/** A heartbeat a minute for the last two hours, "sent" at their times through the shifted clock. */
async function sendHistory(server: LiveServer, key: string, agentId: string, system: SimulatedSystem, clock: ShiftedClock): Promise<void> {
  const start = Date.now() - HISTORY_MINUTES * 60_000;
  try {
    for (let minute = 0; minute < HISTORY_MINUTES; minute++) {
      const at = start + minute * 60_000;
      clock.offsetMs = at - Date.now();
      const payload = { ...(system.collect(null, at) as Record<string, unknown>), agent_id: agentId, platform: 'freebsd' };
      const res = await server.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: apiKey(key), payload });
      expect(res.statusCode, res.body).toBe(200);
    }
  } finally {
    clock.offsetMs = 0;
  }
}

/** A seeded random source, so the simulated history is the same on every run. */
function mulberry(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
