// The reference agent against the real server listening on a port: registration and heartbeats (what
// the server stores and shows), the socket (connected, commands over REST), reconnect with backoff when
// another socket takes its place, the silence watchdog, reboots, re-registration after deletion, stop().
import { createHook } from 'node:async_hooks';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { heartbeatDocument } from '../src/agent/heartbeat-document.js';
import type { ReferenceAgentOptions } from '../src/agent/reference-agent.js';
import { FakeClock } from '../src/platform/clock.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';

const fastBackoff = { initialMs: 50, maxMs: 1000, stableAfterMs: 60_000, random: () => 0.5 };
let t: LiveServer;
let dir: string;
let admin: Record<string, string>;
let key: string;
const started: LiveAgent[] = [];

/**
 * Counts timers created from now on by agent code (src/agent, also through `ws`) that are still pending
 * and keep the event loop alive. The server runs in this process too; its timers (a pg pool's) are not
 * the agent's.
 */
function trackTimers() {
  const live = new Map<number, { hasRef(): boolean }>();
  const fromAgent = () => {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 100;
    const stack = new Error().stack ?? '';
    Error.stackTraceLimit = limit;
    return stack.includes(`${path.sep}src${path.sep}agent${path.sep}`);
  };
  const hook = createHook({
    init: (id, type, _trigger, resource) => void (type === 'Timeout' && fromAgent() && live.set(id, resource as { hasRef(): boolean })),
    destroy: (id) => void live.delete(id),
  }).enable();
  return { pending: () => [...live.values()].filter((x) => x.hasRef()).length, disable: () => hook.disable() };
}

async function start(options: Partial<ReferenceAgentOptions> = {}): Promise<LiveAgent> {
  const live = await t.startAgent(key, { backoff: fastBackoff, ...options });
  started.push(live);
  return live;
}

const get = async <T>(url: string): Promise<T> => {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: admin });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as T;
};
const post = (url: string, payload: object) => t.app.inject({ method: 'POST', url: `/api/v1${url}`, headers: admin, payload });
const connectedOnServer = async (id: string) => (await get<{ connected: boolean }>(`/agents/${id}`)).connected;
const eventTypes = async (id: string) => (await get<Array<{ type: string }>>(`/agents/${id}/events`)).map((e) => e.type);

beforeAll(async () => {
  t = await startLiveServer({ clock: new FakeClock('2026-05-01T10:00:00Z') });
  dir = await mkdtemp(path.join(os.tmpdir(), 'agent-connection-'));
  admin = bearer(await adminToken(t));
  key = (await createKey(t.app, admin, 'agent')).key;
});
afterEach(async () => {
  await Promise.all(started.splice(0).map((a) => a.stop()));
});
afterAll(async () => (await t?.close(), await rm(dir, { recursive: true, force: true })));

describe('registration and heartbeats', () => {
  it('registers, heartbeats with this machine’s system data, and is shown online and connected', async () => {
    const { id } = await start({ name: 'fw-test', hostname: 'agent-test-host', collectSystem: undefined });
    expect(await get(`/agents/${id}`)).toMatchObject({ id, name: 'fw-test', hostname: 'agent-test-host', platform: 'linux', agent_version: '1.0.0', status: 'online', connected: true });

    const sys = await get<Record<string, unknown>>(`/agents/${id}/system`);
    expect(sys).toMatchObject({ agent_id: id, platform: 'linux', hostname: 'agent-test-host', agent_version: '1.0.0' });
    const { cpu, memory, disks, network, uptime_seconds } = sys as { cpu: { usage_percent: number }; memory: Record<string, number>; disks: { mount: string }[]; network: { interfaces: { rx_bytes: number }[] }; uptime_seconds: number };
    expect(cpu.usage_percent).toBeGreaterThanOrEqual(0);
    expect(memory.total_bytes).toBeGreaterThan(memory.used_bytes!);
    expect(disks.map((d) => d.mount)).toContain('/');
    expect(network.interfaces.length).toBeGreaterThan(0);
    expect(typeof network.interfaces[0]!.rx_bytes).toBe('number');
    expect(uptime_seconds).toBeGreaterThan(0);
    expect(sys).toHaveProperty('hypervisor.guests');

    const latest = await get<Array<{ time: string; metric: string; label: string | null }>>(`/agents/${id}/metrics/latest`);
    const metrics = latest.map((s) => s.metric);
    for (const m of ['cpu_usage', 'memory_used_bytes', 'uptime_seconds', 'disk_used_percent', 'interface_rx_bytes']) expect(metrics).toContain(m);
    expect(latest).toContainEqual(expect.objectContaining({ metric: 'disk_used_percent', label: '/', time: '2026-05-01T10:00:00.000Z' }));
  });

  it('heartbeats on the configured interval, stored byte for byte, and keeps its id across restarts', async () => {
    const stateFile = path.join(dir, 'restart.json');
    const system = { cpu: { usage_percent: 12.5 }, memory: { used_bytes: 1024, total_bytes: 4096 }, extra: { note: 'Zürich' } };
    const first = await start({ stateFile, hostname: 'restart-host', heartbeatIntervalMs: 50, collectSystem: () => system });
    const answers: unknown[] = [];
    first.agent.on('heartbeat', (result) => answers.push(result));
    await vi.waitFor(() => expect(answers.length).toBeGreaterThanOrEqual(2));
    expect(answers[0]).toMatchObject({ ok: true, answer: { ok: true, status: 'online', update_available: false } });
    const sent = heartbeatDocument({ agentId: first.id, platform: 'linux', hostname: 'restart-host', agentVersion: '1.0.0' }, system, first.agent.device);
    const stored = await t.app.inject({ method: 'GET', url: `/api/v1/agents/${first.id}/system`, headers: admin });
    expect(stored.body).toBe(JSON.stringify(sent));
    await first.stop();
    expect(JSON.parse(await readFile(stateFile, 'utf8'))).toMatchObject({ agent_id: first.id });

    const again = await start({ stateFile, hostname: 'restart-host' });
    expect(again.id).toBe(first.id);
    expect((await get<Array<{ id: string }>>('/agents?q=restart-host')).map((a) => a.id)).toEqual([first.id]);
  });
});

describe('the agent socket', () => {
  it('is connected as the server sees it and answers commands sent over REST', async () => {
    const live = await start();
    expect(await connectedOnServer(live.id)).toBe(true);
    expect((await get<{ agents: Array<{ agent_id: string }> }>('/hub/status')).agents.map((a) => a.agent_id)).toContain(live.id);
    const exec = await post(`/agents/${live.id}/exec`, { command: 'echo hello', timeout: 5 });
    expect(exec.statusCode, exec.body).toBe(200);
    expect(exec.json()).toMatchObject({ exit_code: 0, stdout: 'hello\n', stderr: '', timed_out: false });
    expect((await post(`/agents/${live.id}/update-check`, {})).json()).toMatchObject({ product: 'Proxmox VE', current_version: '9.1.1' });
    expect(live.commands).toEqual(['exec', 'update_check']);
  });

  it('answers a failing command with its error and stays connected', async () => {
    const live = await start();
    const drops: unknown[] = [];
    live.agent.on('disconnected', (info) => drops.push(info));
    const res = await post(`/agents/${live.id}/hypervisor/action`, { action: 'start', vmid: 999, type: 'vm' });
    expect(expectError(res, 502, 'AGENT_ERROR').error).toContain('no guest with vmid 999');
    expect((await post(`/agents/${live.id}/update-check`, {})).statusCode).toBe(200);
    expect(drops).toEqual([]);
    expect(await connectedOnServer(live.id)).toBe(true);
  });

  it('reconnects with doubling delays while another socket keeps taking its place (4000), then holds it', async () => {
    const live = await start();
    const delays: number[] = [];
    const codes: number[] = [];
    live.agent.on('reconnect_scheduled', ({ delayMs }) => delays.push(delayMs));
    live.agent.on('disconnected', ({ code }) => codes.push(code));
    // A second socket for the agent id replaces the agent's; when the agent comes back and replaces it in
    // turn, it connects again — three times.
    const squatters: number[] = [];
    const squat = async (left: number): Promise<void> => {
      const peer = await t.openRaw(live.id, key);
      void peer.closed.then((code) => (squatters.push(code), left > 1 ? squat(left - 1) : undefined));
    };
    await squat(3);
    await vi.waitFor(() => expect(squatters).toEqual([4000, 4000, 4000]), { timeout: 10_000 });
    await vi.waitFor(() => expect(live.agent.connected).toBe(true));
    expect(codes).toEqual([4000, 4000, 4000]);
    // Each loss of an open connection starts at the drop rung (8 × 50 ms, half of it with random 0.5) and
    // the ladder climbs from there, up to maxMs (1 s).
    expect(delays).toEqual([200, 400, 500]);
    expect(await connectedOnServer(live.id)).toBe(true);
    expect((await post(`/agents/${live.id}/update-check`, {})).statusCode).toBe(200);
  });

  it('resets the backoff after a connection that lasted long enough', async () => {
    const live = await start({ backoff: { ...fastBackoff, stableAfterMs: 0 } });
    const delays: number[] = [];
    live.agent.on('reconnect_scheduled', ({ delayMs }) => delays.push(delayMs));
    for (let i = 0; i < 3; i++) {
      const reconnected = once(live.agent, 'connected');
      const peer = await t.openRaw(live.id, key);
      await reconnected;
      expect(await peer.closed).toBe(4000);
    }
    // Back at the drop rung each time (a stable connection resets the climb): 8 × 50 ms × random 0.5.
    expect(delays).toEqual([200, 200, 200]);
  });

  it('drops a connection on which the server stays silent, and reconnects', async () => {
    // Without background jobs the server sends no pings, so the agent's watchdog fires.
    const live = await start({ silenceTimeoutMs: 300 });
    const [dropped] = await once(live.agent, 'disconnected');
    expect(dropped).toMatchObject({ code: 1006 });
    await once(live.agent, 'connected');
    await vi.waitFor(async () => expect((await eventTypes(live.id)).filter((e) => e === 'connected').length).toBeGreaterThanOrEqual(2));
  });

  it('a reboot answers first, goes away, and comes back', async () => {
    const live = await start();
    const gone = once(live.agent, 'disconnected');
    const back = once(live.agent, 'rebooted');
    const res = await post(`/agents/${live.id}/reboot`, { delay: 0 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ rebooting: true, delay: 0 });
    expect((await gone)[0]).toMatchObject({ code: 1001 });
    await back;
    await vi.waitFor(() => expect(live.agent.connected).toBe(true));
    expect(live.agent.device?.reboot_count).toBe(1);
    await vi.waitFor(async () => expect(await eventTypes(live.id)).toEqual(['connected', 'disconnected', 'connected']));
    expect(await connectedOnServer(live.id)).toBe(true);
  });
});

describe('deleted on the server', () => {
  it('registers again under the same id when a heartbeat finds the agent unknown (404)', async () => {
    const live = await start({ hostname: 'deleted-hb', backoff: { ...fastBackoff, initialMs: 600_000, maxMs: 600_000 } });
    const id = live.id;
    const gone = once(live.agent, 'disconnected');
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/agents/${id}`, headers: admin })).statusCode).toBe(200);
    expect((await gone)[0]).toMatchObject({ code: 4004 });
    expect(await live.agent.sendHeartbeat()).toBe(true); // the socket waits 10 minutes to reconnect
    expect(live.agent.agentId).toBe(id);
    expect(await get(`/agents/${id}`)).toMatchObject({ id, hostname: 'deleted-hb', connected: false, system: { agent_id: id } });
  });

  it('registers again under the same id when its socket is refused (404), and reconnects', async () => {
    const live = await start({ hostname: 'deleted-ws' });
    const id = live.id;
    const registered = once(live.agent, 'registered');
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/agents/${id}`, headers: admin })).statusCode).toBe(200);
    expect(await registered).toEqual([id]);
    await vi.waitFor(async () => expect(await connectedOnServer(id)).toBe(true));
    expect(await get(`/agents/${id}`)).toMatchObject({ id, hostname: 'deleted-ws', connected: true });
  });
});

describe('stop()', () => {
  it('closes the socket and leaves no timer that would keep the process alive', async () => {
    const timers = trackTimers();
    try {
      const live = await start({ heartbeatIntervalMs: 1000 });
      expect(timers.pending()).toBeGreaterThan(0);
      await live.agent.stop();
      expect(live.agent.connected).toBe(false);
      await vi.waitFor(async () => expect(await connectedOnServer(live.id)).toBe(false));
      await new Promise((resolve) => setImmediate(resolve));
      expect(timers.pending()).toBe(0);
    } finally {
      timers.disable();
    }
  });
});
