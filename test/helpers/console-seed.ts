// A console with everything a technician's day shows (issue 57's audit ran on demo data like this): a
// customer with agents of the three platforms reporting the shared fixtures, open alerts, a recurring
// task that has run, an open tunnel, a VPN peer, a second user, API keys, stored firmware, WAU list
// entries, a script, a command in the history and a bulk action. Returns every page to visit.
import { expect, vi } from 'vitest';
import { fixtureText } from './fixtures.js';
import { freePort } from './free-port.js';
import { adminToken, bearer, createCustomer, createKey } from './identity.js';
import type { LiveAgent, LiveServer } from './live-agent.js';
import { TunnelTargets } from './tunnels.js';
import { simulatedDeviceHandlers } from '../../src/fleet/simulated-device.js';

/** The pages' groups: a test per group keeps each within its time limit on a busy machine. */
export const PAGE_GROUPS = ['lists', 'firewall', 'hypervisor', 'windows', 'site'] as const;
export interface ConsolePage {
  name: string;
  path: string;
  group: (typeof PAGE_GROUPS)[number];
}

export interface SeededConsole {
  /** Every page of the console by name (agent tabs as `<platform>-<tab>`), in visiting order, each in its group. */
  pages: ConsolePage[];
  agents: { firewall: LiveAgent; hypervisor: LiveAgent; windows: LiveAgent };
  token: string;
  close(): Promise<void>;
}

/** The reference agent's check timings shortened, so checks have states within seconds, not a minute. */
export const FAST_CHECKS = { changeReportDelayMs: 100, reportIntervalMs: 1000, firstRunMaxDelayMs: 500 };

/**
 * A check policy for the customer's agents (issue 61): a disk check that passes and a port nothing
 * listens on, CRITICAL. Waits until `agentId` has reported both; returns the path of its Checks tab
 * with the critical check chosen (history, perfdata chart, override form).
 */
export async function seedCheckPolicy(server: LiveServer, token: string, customerId: number, agentId: string): Promise<string> {
  const closed = await freePort();
  const policy = await server.app.inject({
    method: 'POST',
    url: '/api/v1/check-policies',
    headers: bearer(token),
    payload: {
      name: 'Grundschutz',
      description: 'Disk and the mail relay on every machine of the customer',
      customer_ids: [customerId],
      checks: [
        { name: 'Root disk', kind: 'disk', params: { mount: '/', warn_percent: 99.5, crit_percent: 99.9 }, interval_seconds: 60 },
        { name: 'Mail relay', kind: 'tcp', params: { host: '127.0.0.1', port: closed, warn_ms: 500 }, interval_seconds: 60, timeout_seconds: 5 },
      ],
    },
  });
  expect(policy.statusCode, policy.body).toBe(201);
  const states = async () => {
    const res = await server.app.inject({ method: 'GET', url: `/api/v1/agents/${agentId}/checks`, headers: bearer(token) });
    return (res.json() as { checks: Array<{ id: string; name: string; state: string | null }> }).checks;
  };
  await vi.waitFor(async () => expect((await states()).every((c) => c.state !== null)).toBe(true), { timeout: 30_000, interval: 250 });
  const relay = (await states()).find((c) => c.name === 'Mail relay')!;
  return `/agents/${agentId}/checks?check=${relay.id}`;
}

/** A fixture heartbeat's system data, without the fields the reference agent sends itself. */
export function fixtureSystem(file: string): Record<string, unknown> {
  const { agent_id: _id, platform: _platform, ...system } = JSON.parse(fixtureText(file)) as Record<string, unknown>;
  return system;
}

export async function seedConsole(server: LiveServer, password: string): Promise<SeededConsole> {
  const token = await adminToken(server, 'admin', password);
  const admin = bearer(token);
  const call = async (method: 'POST' | 'PUT', url: string, payload: object) => {
    const res = await server.app.inject({ method, url: `/api/v1${url}`, headers: admin, payload });
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
    return res.json() as Record<string, unknown>;
  };
  const customer = await createCustomer(server.app, token, '10001', 'Bäckerei Sonnenschein GmbH');
  const key = (await createKey(server.app, admin, 'agent')).key;
  await createKey(server.app, admin, 'read', customer.id);
  await call('POST', '/users', { username: 'techniker', password: 'techniker-pass-1' });

  // A threshold every fixture crosses, at once: open alerts on every agent.
  await call('POST', '/alert-rules', { name: 'Disk over 2 %', kind: 'metric_threshold', params: { metric: 'disk_used_percent', operator: '>', threshold: 2, for_seconds: 0 } });
  const firewall = await server.startAgent(key, { name: 'fw-sonnenschein', hostname: 'fw-sonnenschein.example', platform: 'freebsd', collectSystem: () => fixtureSystem('heartbeat-freebsd.json'), checks: FAST_CHECKS });
  const hypervisor = await server.startAgent(key, { name: 'pve-sonnenschein', hostname: 'pve-sonnenschein', platform: 'linux', collectSystem: () => fixtureSystem('heartbeat-linux.json'), checks: FAST_CHECKS });
  const windows = await server.startAgent(key, { name: 'ws-buchhaltung-01', hostname: 'WS-BUCHHALTUNG-01', platform: 'windows', collectSystem: () => fixtureSystem('heartbeat-windows.json'),
    // A pretend Windows machine on this host: its device (C:\ files, services) is the fleet's simulated one.
    deviceHandlers: simulatedDeviceHandlers('windows', 'WS-BUCHHALTUNG-01') });
  for (const agent of [firewall, hypervisor, windows]) {
    await agent.agent.sendHeartbeat();
    await call('PUT', `/agents/${agent.id}/customer`, { customer_id: customer.id });
  }

  const openAlerts = async () => (await server.app.inject({ method: 'GET', url: '/api/v1/alerts?state=firing', headers: admin })).json<unknown[]>().length;
  await vi.waitFor(async () => expect(await openAlerts()).toBeGreaterThanOrEqual(3), { timeout: 15_000, interval: 250 });

  const task = await call('POST', '/tasks', { agent_id: firewall.id, kind: 'exec', params: { command: 'uptime' }, cron: '0 3 * * *', name: 'Nightly uptime' });
  await call('POST', `/tasks/${String(task.id)}/run`, {});
  const upload = await server.app.inject({
    method: 'POST',
    url: '/api/v1/firmware/upload?platform=freebsd&version=25.7.9',
    headers: { ...admin, 'content-type': 'application/octet-stream' },
    payload: Buffer.alloc(4096, 7),
  });
  expect(upload.statusCode, upload.body).toBe(201);
  await call('POST', `/customers/${customer.id}/wau/rules`, { action: 'allow', package_id: 'Mozilla.Firefox', display_name: 'Mozilla Firefox' });
  await call('POST', `/customers/${customer.id}/wau/rules`, { action: 'block', package_id: 'Oracle.JavaRuntimeEnvironment', display_name: 'Java 8' });
  await call('POST', `/agents/${firewall.id}/vpn/peers`, { name: 'Laptop Außendienst' });
  const targets = new TunnelTargets();
  await call('POST', `/agents/${firewall.id}/tunnel`, { target_host: '127.0.0.1', target_port: await targets.echo() });
  await call('POST', '/scripts', { name: 'Disk report', description: 'df for the technician', shell: 'sh', body: 'df -h "$MOUNT"', parameters: [{ name: 'MOUNT', default: '/' }], platforms: ['linux', 'freebsd'] });
  const exec = await call('POST', `/agents/${hypervisor.id}/exec`, { command: 'echo "Filesystem Size Used Avail Use% Mounted on"' });
  const bulk = await call('POST', '/bulk-actions', { action: 'update_check', target: { customer_id: customer.id } });
  const checkPath = await seedCheckPolicy(server, token, customer.id, hypervisor.id);

  const lists = [
    { name: 'fleet', path: '/' },
    { name: 'agents', path: '/agents' },
    { name: 'alerts', path: '/alerts' },
    { name: 'alerts-history', path: '/alerts/history' },
    { name: 'alerts-rules', path: '/alerts/rules' },
    { name: 'alerts-channels', path: '/alerts/channels' },
    { name: 'alerts-maintenance', path: '/alerts/maintenance' },
  ];
  const pages: ConsolePage[] = lists.map((p) => ({ ...p, group: 'lists' }));
  const tabs: Record<string, string[]> = {
    firewall: ['overview', 'metrics', 'checks', 'events', 'backups', 'tunnels', 'vpn', 'desktop', 'actions', 'history'],
    hypervisor: ['overview', 'metrics', 'checks', 'events', 'tunnels', 'actions', 'history'],
    // The device tabs (issue 59) on the simulated Windows machine, whose lists do not depend on this host.
    // The simulated machine runs no checks: its Checks tab says so.
    windows: ['overview', 'metrics', 'checks', 'events', 'tunnels', 'desktop', 'shell', 'files', 'processes', 'services', 'actions', 'recordings', 'history'],
  };
  for (const [platform, agent] of [['firewall', firewall], ['hypervisor', hypervisor], ['windows', windows]] as const) {
    for (const tab of tabs[platform]!) pages.push({ name: `${platform}-${tab}`, path: `/agents/${agent.id}/${tab}`, group: platform });
  }
  pages.push({ name: 'hypervisor-check', path: checkPath, group: 'hypervisor' });
  const site = sitePages({ customerId: customer.id, taskId: Number(task.id), historyId: Number(exec.history_id), bulkId: Number(bulk.id) });
  pages.push(...site.map((p) => ({ ...p, group: 'site' as const })));
  return { pages, agents: { firewall, hypervisor, windows }, token, close: () => targets.close() };
}

/** The console's pages besides the fleet, the lists of agents and alerts and the agent tabs, for the ids given. */
export function sitePages(ids: { customerId: number; taskId: number; historyId: number; bulkId: number }): Array<{ name: string; path: string }> {
  return [
    { name: 'checks', path: '/checks' },
    { name: 'checks-policies', path: '/checks/policies' },
    { name: 'customers', path: '/customers' },
    { name: 'customer', path: `/customers/${ids.customerId}` },
    { name: 'tasks', path: '/tasks' },
    { name: 'task', path: `/tasks/${ids.taskId}` },
    { name: 'firmware', path: '/firmware' },
    { name: 'users', path: '/users' },
    { name: 'keys', path: '/keys' },
    { name: 'audit', path: '/audit' },
    { name: 'settings', path: '/settings' },
    { name: 'account', path: '/account' },
    { name: 'terminal', path: '/terminal' },
    { name: 'scripts', path: '/scripts' },
    { name: 'scripts-history', path: '/scripts/history' },
    { name: 'history-entry', path: `/scripts/history/${ids.historyId}` },
    { name: 'scripts-bulk', path: '/scripts/bulk' },
    { name: 'bulk-action', path: `/bulk/${ids.bulkId}` },
  ];
}
