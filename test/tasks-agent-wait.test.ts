// A task whose agent is away when it falls due waits for it (issue 57: 18 of 144 runs due while agents
// reconnected after an instance restart ended in error and were never retried), with real processes:
// - the wait outlives its server: killed (SIGKILL), the next start takes the run up; stopped (SIGTERM),
//   it lets go of the run and the next start takes it up; the agent connects to the third server and
//   the runs complete, each the same single run;
// - in a cluster (PostgreSQL and NATS), the leader's run goes on when the agent connects to the other
//   instance, and runs there once.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ReferenceAgent } from '../src/agent/reference-agent.js';
import { startClusterPair, type ClusterPair } from './helpers/cluster-instances.js';
import { clusterToolsSkip, startNats, type NatsProcess } from './helpers/cluster-rig.js';
import { testDbKind } from './helpers/db.js';
import { apiKey } from './helpers/identity.js';
import { createProcessDataPlace, messages, PROCESS_TEST_TIMEOUT_MS, spawnServer, type ProcessDataPlace, type ServerProcess } from './helpers/spawn-server.js';

const ADMIN_PASSWORD = 'agent-wait-admin-pw-1';
const TAKEN_UP = /^task run taken up while it waits for its agent: \S/;

interface RunDto {
  id: number;
  status: string;
  waiting_until: string | null;
  result: Record<string, unknown> | null;
  error: string | null;
}

/** A JSON call against a server's API; fails the test on a status other than `expected`. */
async function api<T>(base: string, headers: Record<string, string>, method: string, route: string, body?: object, expected = 200): Promise<T> {
  const res = await fetch(`${base}/api/v1${route}`, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  expect(res.status, `${method} ${route}: ${text}`).toBe(expected);
  return JSON.parse(text) as T;
}

const agents: ReferenceAgent[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.stop()));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** The reference agent of an agent registered before, connecting to `serverUrl`. */
async function connectAgent(serverUrl: string, key: string, agentId: string, hostname: string): Promise<ReferenceAgent> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-agent-wait-'));
  dirs.push(dir);
  const agent = new ReferenceAgent({
    serverUrl,
    apiKey: key,
    agentId,
    stateFile: path.join(dir, 'state.json'),
    hostname,
    platform: 'linux',
    heartbeatIntervalMs: 3_600_000,
    collectSystem: () => ({ cpu: { usage_percent: 1 } }),
    backoff: { initialMs: 100, maxMs: 1000 },
    log: () => undefined,
  });
  agents.push(agent);
  await agent.start();
  await vi.waitFor(() => expect(agent.connected).toBe(true), { timeout: 15_000 });
  return agent;
}

/** Registers an agent over REST without opening its socket. */
const register = async (base: string, key: string, hostname: string) =>
  (await api<{ agent_id: string }>(base, apiKey(key), 'POST', '/agent/register', { hostname, platform: 'linux' })).agent_id;

describe('a run waiting for its agent when its server stops', () => {
  let place: ProcessDataPlace;
  const servers: ServerProcess[] = [];
  beforeAll(async () => {
    place = await createProcessDataPlace();
  });
  afterAll(async () => {
    for (const server of servers) server.kill('SIGTERM');
    await Promise.all(servers.map((server) => server.exited));
    await place?.cleanup();
  });

  async function startServer(): Promise<{ proc: ServerProcess; base: string }> {
    const proc = spawnServer({ ...place.env, ADMIN_PASSWORD });
    servers.push(proc);
    await proc.listening;
    return { proc, base: `http://127.0.0.1:${proc.port}` };
  }

  it('is taken up by the next start, killed or stopped, and runs once when the agent connects', async () => {
    const first = await startServer();
    const { token } = await api<{ token: string }>(first.base, {}, 'POST', '/auth/login', { username: 'admin', password: ADMIN_PASSWORD });
    const admin = { authorization: `Bearer ${token}` };
    const key = async (permissions: string) => (await api<{ key: string }>(first.base, admin, 'POST', '/apikeys', { name: permissions, permissions }, 201)).key;
    const writeKey = { 'x-api-key': await key('write') };
    const agentKey = await key('agent');
    const agentId = await register(first.base, agentKey, 'fw-restart');

    const runsOf = (base: string, id: number) => api<RunDto[]>(base, writeKey, 'GET', `/tasks/${id}/runs`);
    const createWaiting = async (base: string, command: string) => {
      const task = await api<{ id: number }>(base, writeKey, 'POST', '/tasks', { agent_id: agentId, kind: 'exec', params: { command }, agent_wait_timeout: 3600 }, 201);
      await vi.waitFor(async () => expect((await runsOf(base, task.id))[0]?.waiting_until ?? null).not.toBeNull(), { timeout: 15_000 });
      return { id: task.id, run: (await runsOf(base, task.id))[0]! };
    };

    const killed = await createWaiting(first.base, 'echo killed');
    first.proc.kill('SIGKILL');
    expect(await first.proc.exited).toBeNull();

    const second = await startServer();
    await vi.waitFor(() => expect(messages(second.proc).filter((m) => TAKEN_UP.test(m))).toHaveLength(1), { timeout: 15_000 });
    expect((await runsOf(second.base, killed.id))[0]).toMatchObject({ id: killed.run.id, status: 'running', waiting_until: killed.run.waiting_until });
    const stopped = await createWaiting(second.base, 'echo stopped');
    second.proc.kill('SIGTERM');
    expect(await second.proc.exited).toBe(0);

    const third = await startServer();
    await vi.waitFor(() => expect(messages(third.proc).filter((m) => TAKEN_UP.test(m))).toHaveLength(2), { timeout: 15_000 });
    await connectAgent(third.base, agentKey, agentId, 'fw-restart');
    for (const [task, stdout] of [[killed, 'killed\n'], [stopped, 'stopped\n']] as const) {
      await vi.waitFor(async () => expect((await runsOf(third.base, task.id))[0]?.status).toBe('completed'), { timeout: 15_000 });
      const runs = await runsOf(third.base, task.id);
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ id: task.run.id, waiting_until: null, error: null, result: { exit_code: 0, stdout } });
    }
    // No run was closed as interrupted on the way.
    expect([...messages(second.proc), ...messages(third.proc)].filter((m) => m.startsWith('task run abandoned'))).toEqual([]);
  }, 3 * PROCESS_TEST_TIMEOUT_MS);
});

const rig = clusterToolsSkip('a run waiting for its agent in a cluster');

describe.skipIf(testDbKind() !== 'postgres' || rig.skip)(rig.title, { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let nats: NatsProcess;
  let c: ClusterPair;
  beforeAll(async () => {
    nats = await startNats();
    c = await startClusterPair(nats.url);
    await vi.waitFor(() => expect(c.leader()).toBeDefined(), { timeout: 30_000 });
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(async () => {
    await c?.close();
    await nats?.stop();
  });

  it('goes on when the agent connects to the instance that does not run the scheduler, and runs once', async () => {
    const leader = c.leader()!;
    const other = leader === c.a ? c.b : c.a;
    const agentId = await register(other.url, c.agentKey, 'fw-cluster-late');
    // Made on the leader, which wakes its scheduler at once (elsewhere it finds the task on its next round).
    const task = await c.call(leader, 'POST', '/tasks', { agent_id: agentId, kind: 'exec', params: { command: 'echo across' }, agent_wait_timeout: 600 });
    expect(task.status, JSON.stringify(task.json)).toBe(201);
    const runs = async () => (await c.call(other, 'GET', `/tasks/${task.json.id}/runs`)).json as RunDto[];
    await vi.waitFor(async () => expect((await runs())[0]?.waiting_until ?? null).not.toBeNull(), { timeout: 30_000 });

    await connectAgent(other.url, c.agentKey, agentId, 'fw-cluster-late');
    await vi.waitFor(async () => expect((await runs())[0]?.status).toBe('completed'), { timeout: 30_000 });
    expect(await runs()).toEqual([expect.objectContaining({ status: 'completed', waiting_until: null, result: expect.objectContaining({ stdout: 'across\n' }) })]);
    const hub = (await c.call(other, 'GET', '/hub/status')).json as { agents: Array<{ agent_id: string; instance_id: string }> };
    expect(hub.agents.find((a) => a.agent_id === agentId)?.instance_id).toBe(other.id);
  });
});
