// The fleet simulator (issue 14) against the real server: simulated agents register (adopting a
// pre-registered record by name), report a platform mix with metrics that move, answer commands over
// their WebSockets, and one that goes away disconnects and comes back.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Fleet } from '../src/fleet/fleet.js';
import { SimulatedSystem } from '../src/fleet/simulated-system.js';
import { adminToken, bearer, createCustomer, createKey } from './helpers/identity.js';
import { RfbViewer } from './helpers/rfb-viewer.js';
import { openTunnel } from './helpers/tunnels.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';

interface AgentDto {
  id: string;
  name: string;
  platform: string;
  status: string;
  customer_id: number | null;
  hostname: string;
}

describe('fleet simulator', () => {
  let server: LiveServer;
  let fleet: Fleet | undefined;
  let stateDir: string;
  let token: string;

  beforeEach(async () => {
    server = await startLiveServer();
    token = await adminToken(server);
    stateDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-fleet-test-'));
  });

  afterEach(async () => {
    await fleet?.stop();
    fleet = undefined;
    await server.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  const get = async <T>(url: string): Promise<T> => {
    const res = await server.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: bearer(token) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as T;
  };

  async function startFleet(agents: number): Promise<Fleet> {
    const { key } = await createKey(server.app, bearer(token), 'agent');
    fleet = new Fleet({ serverUrl: server.url, apiKey: key, agents, intervalMs: 400, stateDir, startSpreadMs: 100, outageEveryMs: 0 });
    await fleet.start();
    return fleet;
  }

  it('registers a mixed fleet whose metrics move and whose agents answer commands', async () => {
    const customer = await createCustomer(server.app, token, '4711');
    const pre = await server.app.inject({ method: 'POST', url: '/api/v1/agents', headers: bearer(token), payload: { name: 'sim-2', customer_id: customer.id } });
    expect(pre.statusCode, pre.body).toBe(201);

    const f = await startFleet(6);
    await vi.waitFor(() => expect(f.stats.heartbeatsOk).toBeGreaterThanOrEqual(24), { timeout: 15_000, interval: 100 });

    const agents = await get<AgentDto[]>('/agents');
    expect(agents.map((a) => a.name).sort()).toEqual(['sim-1', 'sim-2', 'sim-3', 'sim-4', 'sim-5', 'sim-6']);
    expect(new Set(agents.map((a) => a.platform))).toEqual(new Set(['freebsd', 'linux', 'windows']));
    expect(agents.every((a) => a.status === 'online')).toBe(true);
    const adopted = agents.find((a) => a.name === 'sim-2')!;
    expect(adopted.id).toBe(pre.json<{ id: string }>().id);
    expect(adopted.customer_id).toBe(customer.id);
    expect(f.stats).toMatchObject({ agents: 6, registered: 6, connected: 6, heartbeatsFailed: 0 });

    const firewall = agents.find((a) => a.platform === 'freebsd')!;
    expect(firewall.hostname).toMatch(/^fw-\d{4}\.msp\.example$/);
    const cpu = await get<Array<{ value: number }>>(`/agents/${firewall.id}/metrics?metric=cpu_usage`);
    expect(cpu.length).toBeGreaterThanOrEqual(3);
    expect(new Set(cpu.map((s) => s.value)).size).toBeGreaterThan(1);
    const rx = await get<Array<{ time: string; label: string; value: number }>>(`/agents/${firewall.id}/metrics?metric=interface_rx_bytes&label=igc0`);
    const ordered = rx.sort((a, b) => a.time.localeCompare(b.time)).map((s) => s.value);
    expect(ordered.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < ordered.length; i++) expect(ordered[i]).toBeGreaterThanOrEqual(ordered[i - 1]!);
    expect(ordered.at(-1)).toBeGreaterThan(ordered[0]!);

    const windows = agents.find((a) => a.platform === 'windows')!;
    const exec = await server.app.inject({
      method: 'POST',
      url: `/api/v1/agents/${windows.id}/exec`,
      headers: bearer(token),
      payload: { command: 'echo fleet', timeout: 10 },
    });
    expect(exec.statusCode, exec.body).toBe(200);
    expect(exec.json<{ stdout: string }>().stdout).toContain('fleet');
  });

  it("a simulated firewall's VPN peers are the same in its heartbeats and its peer commands, and a new peer gets a free address", async () => {
    const f = await startFleet(3);
    await vi.waitFor(() => expect(f.stats.connected).toBe(3), { timeout: 15_000 });
    const firewall = (await get<AgentDto[]>('/agents')).find((a) => a.platform === 'freebsd')!;
    type ReportedPeer = { uuid: string; tunnel_address: string; name: string };
    const reported = async () =>
      (await get<{ system: { vpn?: { wireguard?: { servers?: Array<{ peers: ReportedPeer[] }> } } } }>(`/agents/${firewall.id}`)).system.vpn?.wireguard?.servers?.[0]?.peers ?? [];
    const listed = () => get<ReportedPeer[]>(`/agents/${firewall.id}/vpn/peers`);
    const key = (peers: ReportedPeer[]) => peers.map((p) => `${p.uuid} ${p.tunnel_address}`).sort();

    await vi.waitFor(async () => expect((await reported()).length).toBe(25), { timeout: 10_000 });
    expect(key(await listed())).toEqual(key(await reported()));
    const res = await server.app.inject({ method: 'POST', url: `/api/v1/agents/${firewall.id}/vpn/peers`, headers: bearer(token), payload: { name: 'laptop-new', server_name: 'ALWAYSON_VPN' } });
    expect(res.statusCode, res.body).toBe(201);
    const added = res.json<ReportedPeer>();
    // The profile's peers use 10.200.0.2 to .26; the next free one is .27.
    expect(added.tunnel_address).toBe('10.200.0.27/32');
    await vi.waitFor(async () => expect((await reported()).map((p) => p.uuid)).toContain(added.uuid), { timeout: 10_000 });
    expect(key(await listed())).toEqual(key(await reported()));
  });

  it("a tunnel to a simulated device's VNC port (127.0.0.1:5900) shows the fleet's test screen", async () => {
    const f = await startFleet(2);
    await vi.waitFor(() => expect(f.stats.connected).toBe(2), { timeout: 10_000 });
    const [agent] = await get<AgentDto[]>('/agents');
    const tunnel = await openTunnel(server, bearer(token), agent!.id, 5900);
    const viewer = await RfbViewer.tcp('127.0.0.1', tunnel.proxy_port);
    try {
      const init = await viewer.handshake();
      expect(init).toMatchObject({ width: 800, height: 600, name: 'simulated device' });
      viewer.request(false, init);
      const update = await viewer.nextUpdate();
      expect(update.bytes).toBe(4 + 12 + 800 * 600 * 4);
    } finally {
      viewer.close();
    }
  });

  it('an agent that goes away drops its socket and comes back with heartbeats', async () => {
    const f = await startFleet(2);
    const [agent] = f.members;
    await vi.waitFor(() => expect(f.stats.connected).toBe(2), { timeout: 10_000 });
    const away = agent!.goAway(1500);
    await vi.waitFor(() => expect(f.stats).toMatchObject({ connected: 1, away: 0 }), { timeout: 10_000, interval: 20 });
    await vi.waitFor(async () => {
      const hub = await get<{ agents: Array<{ agent_id: string }> }>('/hub/status');
      expect(hub.agents.map((a) => a.agent_id)).not.toContain(agent!.agentId);
    });
    await away;
    const before = f.stats.heartbeatsOk;
    await vi.waitFor(() => expect(f.stats.connected).toBe(2), { timeout: 10_000 });
    await vi.waitFor(() => expect(f.stats.heartbeatsOk).toBeGreaterThan(before + 2), { timeout: 10_000 });
  });
});

describe('simulated system data', () => {
  it('keeps percentages in range and counters growing over a day of beats', () => {
    let now = Date.parse('2026-11-24T00:00:00Z');
    const system = new SimulatedSystem('freebsd', 'fw-0001.msp.example', Math.random, now);
    let previous: Array<{ rx_bytes: number; tx_bytes: number }> = [];
    const cpuValues = new Set<number>();
    for (let beat = 0; beat < 1440; beat++) {
      now += 60_000;
      const data = system.collect(null, now) as {
        hostname: string;
        cpu: { usage_percent: number };
        memory: { used_percent: number };
        disks: Array<{ used_percent: number }>;
        network: { interfaces: Array<{ rx_bytes: number; tx_bytes: number }> };
        gateways: Array<{ rtt_ms: number; loss_percent: number }>;
      };
      expect(data.hostname).toBe('fw-0001.msp.example');
      cpuValues.add(data.cpu.usage_percent);
      for (const p of [data.cpu.usage_percent, data.memory.used_percent, ...data.disks.map((d) => d.used_percent)]) {
        expect(p).toBeGreaterThanOrEqual(0);
        expect(p).toBeLessThanOrEqual(100);
      }
      for (const g of data.gateways) expect(g.rtt_ms).toBeGreaterThan(0);
      data.network.interfaces.forEach((nic, i) => {
        if (previous[i]) expect(nic.rx_bytes).toBeGreaterThanOrEqual(previous[i]!.rx_bytes);
      });
      previous = data.network.interfaces;
    }
    expect(cpuValues.size).toBeGreaterThan(100);
  });
});
