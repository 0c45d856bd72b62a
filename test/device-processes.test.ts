// Processes on an agent's device (issue 59) end to end: the real reference agent over a real WebSocket
// reads this machine's /proc, and kills a real `sleep 600` this test started. Who may: read users list
// but never kill, another customer's user does not see the agent, API keys only with the setting on.
// Older agents (no capability) and agents away are refused with the contract's 409s, and the
// capabilities an agent announced stay on its record after it is gone.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CAPABILITY_COMMANDS, type DeviceProcess } from '../src/modules/agent-hub/device-protocol.js';
import type { AgentCommand } from '../src/modules/agent-hub/agent-protocol.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createCustomer, createKey, login, seedUser } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';

let s: LiveServer;
let admin: Record<string, string>;
let agentKey: string;
let agent: LiveAgent;
const children = new Set<ChildProcess>();
const DEVICE_COMMANDS = Object.values(CAPABILITY_COMMANDS).flat() as AgentCommand[];

beforeAll(async () => {
  s = await startLiveServer({ captureLogs: true });
  admin = bearer(await adminToken(s));
  agentKey = (await createKey(s.app, admin, 'agent')).key;
  agent = await s.startAgent(agentKey, { name: 'pve-procs' });
  await untilCapabilities(agent.id, (caps) => caps.includes('processes'));
}, 30_000);
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await s?.close();
});

const call = (method: 'GET' | 'POST' | 'PUT', url: string, headers: Record<string, string>, payload?: unknown) =>
  s.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {}) });

async function agentRecord(id: string): Promise<{ capabilities: string[] }> {
  const res = await call('GET', `/agents/${id}`, admin);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { capabilities: string[] };
}

async function untilCapabilities(id: string, ok: (caps: string[]) => boolean): Promise<string[]> {
  return vi.waitFor(async () => {
    const { capabilities } = await agentRecord(id);
    if (!ok(capabilities)) throw new Error(`capabilities still ${JSON.stringify(capabilities)} ${s.logs().filter((l) => /capabilit|warn|error/i.test(l)).join("\n")}`);
    return capabilities;
  }, { timeout: 10_000, interval: 50 });
}

async function processes(headers = admin, id = agent.id): Promise<DeviceProcess[]> {
  const res = await call('GET', `/agents/${id}/processes`, headers);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { processes: DeviceProcess[] }).processes;
}

function sleeper(): ChildProcess & { pid: number } {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child as ChildProcess & { pid: number };
}

async function userHeaders(name: string, access: Parameters<typeof seedUser>[3]) {
  await seedUser(s, name, 'user-password-1', access);
  return bearer(await login(s.app, name, 'user-password-1'));
}

describe('the process list and a kill', () => {
  it('lists a sleep this test started with its command line, kills it, and it is gone', async () => {
    const child = sleeper();
    const listed = (await processes()).find((p) => p.pid === child.pid);
    expect(listed).toMatchObject({ pid: child.pid, ppid: process.pid, name: 'sleep', command: 'sleep 600', user: expect.any(String) });
    expect(listed!.rss_bytes).toBeGreaterThan(0);
    expect(listed!.cpu_percent).toBeGreaterThanOrEqual(0);
    expect(Date.parse(listed!.started_at!)).toBeGreaterThan(Date.now() - 120_000);

    const exited = once(child, 'exit');
    const res = await call('POST', `/agents/${agent.id}/processes/${child.pid}/kill`, admin, {});
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({});
    expect(await exited).toEqual([null, 'SIGTERM']);
    expect((await processes()).some((p) => p.pid === child.pid)).toBe(false);

    const audit = await call('GET', '/audit?action=device.process_kill', admin);
    expect((audit.json() as Array<{ target: string | null; status_code: number }>)[0]).toMatchObject({ target: `agent pve-procs: kill ${child.pid} (TERM)`, status_code: 200 });
  });

  it('sends the signal asked for', async () => {
    const child = sleeper();
    const exited = once(child, 'exit');
    expect((await call('POST', `/agents/${agent.id}/processes/${child.pid}/kill`, admin, { signal: 'KILL' })).statusCode).toBe(200);
    expect(await exited).toEqual([null, 'SIGKILL']);
  });

  it('says 404 for a process that does not exist, and the agent refuses PID 1 and itself', async () => {
    expectError(await call('POST', `/agents/${agent.id}/processes/2147483647/kill`, admin, {}), 404, 'NOT_FOUND');
    const init = expectError(await call('POST', `/agents/${agent.id}/processes/1/kill`, admin, {}), 502, 'AGENT_ERROR');
    expect(init.error).toMatch(/PID 1/);
    const self = expectError(await call('POST', `/agents/${agent.id}/processes/${process.pid}/kill`, admin, {}), 502, 'AGENT_ERROR');
    expect(self.error).toMatch(/agent itself/);
  });

  it('refuses hostile input with 400 and signals nothing', async () => {
    const child = sleeper();
    expectError(await call('POST', `/agents/${agent.id}/processes/abc/kill`, admin, {}), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', `/agents/${agent.id}/processes/-${child.pid}/kill`, admin, {}), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', `/agents/${agent.id}/processes/${child.pid}/kill`, admin, { signal: 'STOP' }), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', `/agents/${agent.id}/processes/${child.pid}/kill`, admin, { signal: 'TERM', extra: 1 }), 400, 'VALIDATION_ERROR');
    expect((await processes()).some((p) => p.pid === child.pid)).toBe(true);
    expect(child.exitCode === null && child.signalCode === null).toBe(true);
  });
});

describe('who may', () => {
  it('lets a read user list processes and services but not kill', async () => {
    const reader = await userHeaders('reader', { role: 'read' });
    const child = sleeper();
    expect((await processes(reader)).some((p) => p.pid === child.pid)).toBe(true);
    expect((await call('GET', `/agents/${agent.id}/services`, reader)).statusCode).toBe(200);
    expectError(await call('POST', `/agents/${agent.id}/processes/${child.pid}/kill`, reader, {}), 403, 'FORBIDDEN');
    expect(child.exitCode === null && child.signalCode === null).toBe(true);
  });

  it("hides the agent from another customer's user", async () => {
    const other = await createCustomer(s.app, admin['authorization']!.slice(7), '9001');
    const outsider = await userHeaders('outsider', { role: 'write', customer_ids: [other.id] });
    expectError(await call('GET', `/agents/${agent.id}/processes`, outsider), 404, 'NOT_FOUND');
    expectError(await call('POST', `/agents/${agent.id}/processes/2147483647/kill`, outsider, {}), 404, 'NOT_FOUND');
  });

  it('refuses API keys while device_api_keys is off and lets them in when it is on', async () => {
    const key = apiKey((await createKey(s.app, admin, 'write')).key);
    expectError(await call('GET', `/agents/${agent.id}/processes`, key), 403, 'FORBIDDEN');
    expect((await call('PUT', `/settings`, admin, { device_api_keys: true })).statusCode).toBe(200);
    try {
      const child = sleeper();
      expect((await processes(key)).some((p) => p.pid === child.pid)).toBe(true);
      const exited = once(child, 'exit');
      expect((await call('POST', `/agents/${agent.id}/processes/${child.pid}/kill`, key, {})).statusCode).toBe(200);
      await exited;
    } finally {
      expect((await call('PUT', `/settings`, admin, { device_api_keys: false })).statusCode).toBe(200);
    }
  });
});

describe('capabilities', () => {
  it('an agent without the commands announces none, the record follows, and it is answered 409 AGENT_UNSUPPORTED', async () => {
    const current = await s.startAgent(agentKey, { name: 'pve-old' });
    await untilCapabilities(current.id, (caps) => caps.includes('processes') && caps.includes('services'));
    const id = current.id;
    await current.stop();
    // The same device comes back with an agent version that predates every device command.
    await s.startAgent(agentKey, { name: 'pve-old', agentId: id, withoutCommands: [...DEVICE_COMMANDS], checks: false });
    await untilCapabilities(id, (caps) => caps.length === 0);
    expectError(await call('GET', `/agents/${id}/processes`, admin), 409, 'AGENT_UNSUPPORTED');
    expectError(await call('GET', `/agents/${id}/services`, admin), 409, 'AGENT_UNSUPPORTED');
    expectError(await call('POST', `/agents/${id}/services/nginx/start`, admin), 409, 'AGENT_UNSUPPORTED');
  });

  it('an agent away keeps its capabilities on its record and is answered 409 AGENT_NOT_CONNECTED', async () => {
    const away = await s.startAgent(agentKey, { name: 'pve-away' });
    const announced = await untilCapabilities(away.id, (caps) => caps.includes('processes') && caps.includes('services'));
    await away.stop();
    await vi.waitFor(async () => expectError(await call('GET', `/agents/${away.id}/processes`, admin), 409, 'AGENT_NOT_CONNECTED'));
    expectError(await call('POST', `/agents/${away.id}/services/nginx/start`, admin), 409, 'AGENT_NOT_CONNECTED');
    expect((await agentRecord(away.id)).capabilities).toEqual(announced);
  });
});
