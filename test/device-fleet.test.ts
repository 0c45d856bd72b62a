// The fleet simulator answers the device commands (issue 59) from each agent's SIMULATED device, never
// from the machine it runs on: a demo's process list shows the profile's processes (a hypervisor's
// pvedaemon, a Windows machine's spoolsv.exe), and kills, stops and starts change that simulated state
// only. Real Fleet, real server, real WebSockets; the requests go through the public API.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DeviceProcess, DeviceService } from '../src/modules/agent-hub/device-protocol.js';
import { Fleet } from '../src/fleet/fleet.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';

let s: LiveServer;
let admin: Record<string, string>;
let fleet: Fleet;
let stateDir: string;
/** Agent id per platform. */
const ids: Record<string, string> = {};

beforeAll(async () => {
  s = await startLiveServer();
  admin = bearer(await adminToken(s));
  stateDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-fleet-'));
  // Five agents: the default mix's first five are firewall, Windows, firewall, Windows, hypervisor.
  fleet = new Fleet({ serverUrl: s.url, apiKey: (await createKey(s.app, admin, 'agent')).key, agents: 5, intervalMs: 3_600_000, stateDir, startSpreadMs: 0, outageEveryMs: 0 });
  await fleet.start();
  for (const agent of fleet.members) ids[agent.platform] ??= agent.agentId!;
  await vi.waitFor(() => expect(fleet.members.every((a) => a.connected)).toBe(true), { timeout: 20_000 });
}, 60_000);
afterAll(async () => {
  await fleet?.stop();
  await s?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

const call = (method: 'GET' | 'POST', url: string) => s.app.inject({ method, url: `/api/v1${url}`, headers: admin });
async function processes(id: string): Promise<DeviceProcess[]> {
  const res = await call('GET', `/agents/${id}/processes`);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { processes: DeviceProcess[] }).processes;
}
async function services(id: string): Promise<{ manager: string; services: DeviceService[] }> {
  const res = await call('GET', `/agents/${id}/services`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { manager: string; services: DeviceService[] };
}

describe('the fleet simulator', () => {
  it('announces every device capability, and checks (simulated since issue 61)', async () => {
    await vi.waitFor(async () => {
      for (const id of Object.values(ids)) expect([...((await call('GET', `/agents/${id}`)).json() as { capabilities: string[] }).capabilities].sort()).toEqual(['checks', 'files', 'processes', 'services', 'shell']);
    });
  });

  it("lists the simulated device's processes, none of this machine's", async () => {
    const listed = await processes(ids.linux!);
    expect(listed.map((p) => p.name)).toEqual(expect.arrayContaining(['systemd', 'pvedaemon', 'pveproxy', 'corosync', 'rmm-agent']));
    // This very test runs in node under vitest: a listing from the host would show it.
    expect(listed.filter((p) => /vitest|node/.test(p.command) || p.pid === process.pid)).toEqual([]);
    expect((await processes(ids.windows!)).map((p) => p.name)).toEqual(expect.arrayContaining(['System', 'spoolsv.exe', 'explorer.exe']));
    expect((await processes(ids.freebsd!)).map((p) => p.name)).toEqual(expect.arrayContaining(['init', 'unbound', 'sshd']));
  });

  it('a kill removes the process and takes its service down; a start brings it back with a new pid', async () => {
    const id = ids.linux!;
    const proxy = (await processes(id)).find((p) => p.name === 'pveproxy')!;
    expect((await call('POST', `/agents/${id}/processes/${proxy.pid}/kill`)).statusCode).toBe(200);
    expect((await processes(id)).filter((p) => p.name.startsWith('pveproxy'))).toEqual([]); // its worker went with it
    const after = await services(id);
    expect(after.manager).toBe('systemd');
    expect(after.services.find((x) => x.name === 'pveproxy')?.state).toBe('failed');
    expectError(await call('POST', `/agents/${id}/processes/${proxy.pid}/kill`), 404, 'NOT_FOUND');
    expectError(await call('POST', `/agents/${id}/processes/1/kill`), 502, 'AGENT_ERROR');

    const started = (await call('POST', `/agents/${id}/services/pveproxy/start`)).json() as { service: DeviceService };
    expect(started.service).toMatchObject({ name: 'pveproxy', state: 'running' });
    const again = (await processes(id)).find((p) => p.name === 'pveproxy')!;
    expect(again.pid).not.toBe(proxy.pid);
  });

  it("stops and disables a Windows service in the simulated service control manager", async () => {
    const id = ids.windows!;
    expect((await services(id)).manager).toBe('scm');
    const stopped = (await call('POST', `/agents/${id}/services/Spooler/stop`)).json() as { service: DeviceService };
    expect(stopped.service).toMatchObject({ name: 'Spooler', description: 'Print Spooler', state: 'stopped' });
    expect((await processes(id)).some((p) => p.name === 'spoolsv.exe')).toBe(false);
    expect(((await call('POST', `/agents/${id}/services/Spooler/disable`)).json() as { service: DeviceService }).service.start_mode).toBe('disabled');
    expectError(await call('POST', `/agents/${id}/services/Spooler/start`), 502, 'AGENT_ERROR');
    expectError(await call('POST', `/agents/${id}/services/nginx/start`), 404, 'NOT_FOUND');
    expect((await services(ids.freebsd!)).manager).toBe('rc.d');
  });
});
