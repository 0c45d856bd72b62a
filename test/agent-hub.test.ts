// The agent hub with the project's reference agent over a real socket (contract §5, §6): REST commands and
// their error mapping (409/404/403/400, 504 on the server clock, 502 disconnect/agent error), socket
// replacement (4000) and deletion (4004), connection state and events, hub status scope, and keep-alive.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { BACKGROUND_LOOPS } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';

type Body = Record<string, unknown>;
interface HubStatus {
  agents: Array<{ agent_id: string; remote_address: string; last_seen: string; pending_commands: number }>;
  pending_commands: number;
}

const clock = new FakeClock('2026-03-02T09:00:00Z');
let s: LiveServer;
const keys = { admin: '', agentA: '', agentB: '', writeA: '', writeB: '', read: '', readB: '' };
let main: LiveAgent;
const extra: LiveAgent[] = [];

beforeAll(async () => {
  s = await startLiveServer({ clock, captureLogs: true });
  // A login token expires on the fake clock: mint API keys once and use only those.
  const token = await adminToken(s);
  const admin = bearer(token);
  const [a, b] = [await createCustomer(s.app, token, 'K-100'), await createCustomer(s.app, token, 'K-200')];
  keys.admin = (await createKey(s.app, admin, 'admin')).key;
  keys.agentA = (await createKey(s.app, admin, 'agent', a.id)).key;
  keys.agentB = (await createKey(s.app, admin, 'agent', b.id)).key;
  keys.writeA = (await createKey(s.app, admin, 'write', a.id)).key;
  keys.writeB = (await createKey(s.app, admin, 'write', b.id)).key;
  keys.read = (await createKey(s.app, admin, 'read')).key;
  keys.readB = (await createKey(s.app, admin, 'read', b.id)).key;
  main = await s.startAgent(keys.agentA, { name: 'pve-main' });
});
afterEach(async () => {
  await Promise.all(extra.splice(0).map((a) => a.stop()));
});
afterAll(() => s?.close());

/** A reference agent that the test may stop, reboot or replace; stopped after the test. */
async function extraAgent(key: string, options: Parameters<LiveServer['startAgent']>[1] = {}) {
  const agent = await s.startAgent(key, options);
  extra.push(agent);
  return agent;
}

const post = (id: string, command: string, payload: Body = {}, key = keys.writeA) =>
  s.app.inject({ method: 'POST', url: `/api/v1/agents/${id}/${command}`, headers: apiKey(key), payload });
const exec = (id: string, command: string, timeout = 30, key = keys.writeA) => post(id, 'exec', { command, timeout }, key);
const get = async <T>(url: string, key = keys.admin) => {
  const res = await s.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: apiKey(key) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as T;
};
const hub = (key = keys.admin) => get<HubStatus>('/hub/status', key);
const connected = async (id: string) => (await get<{ connected: boolean }>(`/agents/${id}`)).connected;
const eventTypes = async (id: string) => (await get<Array<{ type: string }>>(`/agents/${id}/events`)).map((e) => e.type);
const pendingOf = async (id: string) => (await hub()).agents.find((a) => a.agent_id === id)?.pending_commands;

describe('REST exec through the hub', () => {
  it('runs the command on the reference agent and answers exit code, stdout and stderr', async () => {
    const res = await exec(main.id, 'echo out; echo err >&2; exit 3');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ exit_code: 3, stdout: 'out\n', stderr: 'err\n' });
    expect(main.commands.at(-1)).toBe('exec');
  });

  it('answers 504 AGENT_TIMEOUT once timeout + 15 s have passed on the server clock, not before', async () => {
    const pending = exec(main.id, 'sleep 30', 10);
    await vi.waitFor(async () => expect((await hub()).pending_commands).toBe(1));
    await clock.advance(24_999);
    expect(await pendingOf(main.id)).toBe(1);
    await clock.advance(1);
    expectError(await pending, 504, 'AGENT_TIMEOUT');
    expect((await hub()).pending_commands).toBe(0);
  });

  it('answers 502 AGENT_DISCONNECTED when the agent goes away while the command runs', async () => {
    const agent = await extraAgent(keys.agentA, { name: 'pve-leaving' });
    const pending = exec(agent.id, 'sleep 10', 60);
    await vi.waitFor(async () => expect(await pendingOf(agent.id)).toBe(1));
    await agent.stop();
    expectError(await pending, 502, 'AGENT_DISCONNECTED');
    expect((await hub()).pending_commands).toBe(0);
  });

  it('refuses: not connected 409, unknown 404, another customer\'s key 404, read key 403, bad body 400', async () => {
    const offline = await s.register(keys.agentA, 'fw-offline');
    expectError(await exec(offline, 'true'), 409, 'AGENT_NOT_CONNECTED');
    expectError(await exec('ab'.repeat(16), 'true'), 404, 'NOT_FOUND');
    expectError(await exec(main.id, 'true', 30, keys.writeB), 404, 'NOT_FOUND');
    expectError(await exec(main.id, 'true', 30, keys.read), 403, 'FORBIDDEN');
    expectError(await exec(main.id, 'true', 0), 400, 'VALIDATION_ERROR');
    expectError(await post(main.id, 'exec', { command: '' }), 400, 'VALIDATION_ERROR');
  });
});

describe('connections', () => {
  it('a second socket for the agent replaces the first (4000) and the new one answers', async () => {
    const id = await s.register(keys.agentA, 'pve-twice');
    const raw = await s.openRaw(id, keys.agentA);
    // A command waiting on the old socket fails when it is replaced: the old socket will never answer.
    const orphaned = exec(id, 'echo never');
    await raw.nextCommand();
    // Without checks: its only command is then the exec below (an agent with checks gets its set first).
    const agent = await extraAgent(keys.agentA, { agentId: id, checks: false });
    expect(await raw.closed).toBe(4000);
    expectError(await orphaned, 502, 'AGENT_DISCONNECTED');
    const res = await exec(id, 'echo from-the-new-socket');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ exit_code: 0, stdout: 'from-the-new-socket\n' });
    expect(agent.commands).toEqual(['exec']);
    expect(raw.frames.map((f) => f.command)).toEqual(['exec']);
    expect((await hub()).agents.filter((a) => a.agent_id === id)).toHaveLength(1);
    // A replaced socket closing is no disconnect: the agent never went away.
    await vi.waitFor(async () => expect(await eventTypes(id)).toEqual(['connected', 'connected']));
  });

  it('shows connected, records connected/disconnected, and lists the agent in the hub status by scope', async () => {
    const a = await extraAgent(keys.agentA, { name: 'fw-a' });
    const b = await extraAgent(keys.agentB, { name: 'fw-b' });
    await vi.waitFor(async () => expect(await eventTypes(a.id)).toEqual(['connected']));
    expect(await connected(a.id)).toBe(true);
    const listed = (await hub()).agents.find((x) => x.agent_id === a.id);
    expect(listed).toMatchObject({ remote_address: '127.0.0.1', pending_commands: 0, last_seen: clock.now().toISOString() });
    expect((await hub(keys.read)).agents.map((x) => x.agent_id)).toEqual(expect.arrayContaining([a.id, b.id, main.id]));
    expect((await hub(keys.readB)).agents.map((x) => x.agent_id)).toEqual([b.id]);

    await a.stop();
    await vi.waitFor(async () => expect(await eventTypes(a.id)).toEqual(['disconnected', 'connected']));
    expect(await connected(a.id)).toBe(false);
    expect((await hub()).agents.map((x) => x.agent_id)).not.toContain(a.id);
    expectError(await exec(a.id, 'true'), 409, 'AGENT_NOT_CONNECTED');
  });

  it('deleting the agent closes its socket with 4004, without a disconnected event', async () => {
    const id = await s.register(keys.agentA, 'fw-doomed');
    const raw = await s.openRaw(id, keys.agentA);
    const res = await s.app.inject({ method: 'DELETE', url: `/api/v1/agents/${id}`, headers: apiKey(keys.writeA) });
    expect(res.statusCode, res.body).toBe(200);
    expect(await raw.closed).toBe(4004);
    await vi.waitFor(async () => expect((await hub()).agents.map((x) => x.agent_id)).not.toContain(id));
    // No `disconnected` event is attempted for an agent that no longer exists (it used to log a failure).
    expect(s.logs().filter((line) => line.includes('could not record a connection event'))).toEqual([]);
  });
});

describe('device commands with the reference agent', () => {
  it('update-check, update and major-update (version required) pass the agent\'s answer through', async () => {
    const check = await post(main.id, 'update-check');
    expect(check.statusCode, check.body).toBe(200);
    expect(check.json()).toMatchObject({ product: 'Proxmox VE', current_version: '9.1.1' });
    expect((check.json() as { updates: unknown[] }).updates).toHaveLength(3);

    const update = await post(main.id, 'update', { security_only: true });
    expect(update.statusCode, update.body).toBe(200);
    expect(update.json()).toMatchObject({ applied: [{ name: 'openssl', security: true }], current_version: '9.1.1', rebooting: false });
    expect(((await post(main.id, 'update-check')).json() as { updates: unknown[] }).updates).toHaveLength(2);

    const sent = main.commands.length;
    expectError(await post(main.id, 'major-update', { reboot: false }), 400, 'VALIDATION_ERROR');
    const major = await post(main.id, 'major-update', { version: '10.0' });
    expect(major.statusCode, major.body).toBe(200);
    expect(major.json()).toMatchObject({ previous_version: '9.1.1', current_version: '10.0', changed: true });
    expect(main.commands.slice(sent)).toEqual(['major_update']);
  });

  it('reboot is acknowledged, the agent goes away and comes back on its own', async () => {
    const agent = await extraAgent(keys.agentA, { name: 'pve-reboot' });
    const back = new Promise<void>((resolve) => agent.agent.once('rebooted', () => agent.agent.once('connected', resolve)));
    const res = await post(agent.id, 'reboot', {});
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ rebooting: true, delay: 0 });
    await back;
    await vi.waitFor(async () => expect(await eventTypes(agent.id)).toEqual(['connected', 'disconnected', 'connected']));
    expect(await connected(agent.id)).toBe(true);
    expect(agent.agent.device?.reboot_count).toBe(1);
    expect((await exec(agent.id, 'echo up')).json()).toMatchObject({ stdout: 'up\n' });
  });

  it('hypervisor/action starts and stops guests; shutdown of a container is 400; an unknown vmid is the agent\'s 502', async () => {
    const start = await post(main.id, 'hypervisor/action', { action: 'start', vmid: 101, type: 'vm' });
    expect(start.statusCode, start.body).toBe(200);
    expect(start.json()).toMatchObject({ vmid: 101, previous_status: 'stopped', status: 'running', changed: true });
    const stop = await post(main.id, 'hypervisor/action', { action: 'stop', vmid: 200, type: 'container' });
    expect(stop.json()).toMatchObject({ vmid: 200, type: 'container', status: 'stopped' });

    const sent = main.commands.length;
    expectError(await post(main.id, 'hypervisor/action', { action: 'shutdown', vmid: 200, type: 'container' }), 400, 'VALIDATION_ERROR');
    const unknown = expectError(await post(main.id, 'hypervisor/action', { action: 'start', vmid: 999, type: 'vm' }), 502, 'AGENT_ERROR');
    expect(unknown.error).toContain('no guest with vmid 999');
    expect(main.commands.slice(sent)).toEqual(['hypervisor_action']);
    expect(main.agent.device?.guests.find((g) => g.vmid === 200)?.status).toBe('stopped');
  });
});

describe('keep-alive on the server clock', () => {
  const kaClock = new FakeClock('2026-03-02T12:00:00Z');
  let ka: LiveServer;
  beforeAll(async () => {
    ka = await startLiveServer({ clock: kaClock, backgroundJobs: true });
  });
  afterAll(() => ka?.close());

  it('terminates a peer silent for 90 s and keeps one that answers pings', async () => {
    const admin = bearer(await adminToken(ka));
    const agentKey = (await createKey(ka.app, admin, 'agent')).key;
    const readKey = (await createKey(ka.app, admin, 'read')).key;
    const writeKey = (await createKey(ka.app, admin, 'write')).key;
    const status = async () => (await ka.app.inject({ method: 'GET', url: '/api/v1/hub/status', headers: apiKey(readKey) })).json() as HubStatus;

    const silentId = await ka.register(agentKey, 'fw-silent');
    const silent = await ka.openRaw(silentId, agentKey, { autoPong: false });
    const alive = await ka.startAgent(agentKey, { name: 'pve-alive' });
    let closedCode: number | null = null;
    void silent.closed.then((code) => (closedCode = code));

    for (let tick = 1; tick <= 4; tick++) {
      await vi.waitFor(() => expect(kaClock.pendingSleepers).toBe(BACKGROUND_LOOPS));
      await kaClock.advance(30_000);
      // The answering agent's pong moves its last_seen to now; the silent one's stays at connect time.
      const now = kaClock.now().toISOString();
      await vi.waitFor(async () => expect((await status()).agents.find((a) => a.agent_id === alive.id)?.last_seen).toBe(now));
      // Pinged, not dropped, at 30 s and 60 s of silence.
      if (tick <= 2) await vi.waitFor(() => expect(silent.pings).toBe(tick));
      if (tick === 2) {
        expect(closedCode).toBeNull();
        expect((await status()).agents.map((a) => a.agent_id)).toContain(silentId);
      }
    }
    expect(await silent.closed).toBe(1006);
    expect(silent.pings).toBeGreaterThanOrEqual(2);
    await vi.waitFor(async () => expect((await status()).agents.map((a) => a.agent_id)).toEqual([alive.id]));
    const answer = await ka.app.inject({ method: 'POST', url: `/api/v1/agents/${alive.id}/exec`, headers: apiKey(writeKey), payload: { command: 'echo still-here' } });
    expect(answer.json()).toMatchObject({ exit_code: 0, stdout: 'still-here\n' });
  });
});
