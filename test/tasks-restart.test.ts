// A server killed while tasks run (issue 11 acceptance 4): the real server process, the reference agent
// in this process running `sleep 30` for two tasks, SIGKILL, and a new server on the same data. The new
// process finds runs its dead predecessor had claimed and closes them as `error` with "Interrupted: …":
// the planned task ends in `error`, the recurring one is scheduled again for its next cron match.
//
// The agent is stopped after the kill and before the restart. Stopping it before the kill would let the
// still-living server fail the runs itself (agent disconnected), which is not the path under test; left
// running it would only knock on the dead port, since the new server listens on a new one.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ReferenceAgent } from '../src/agent/reference-agent.js';
import { createProcessDataPlace, messages, spawnServer, type ProcessDataPlace, type ServerProcess } from './helpers/spawn-server.js';

const ADMIN_PASSWORD = 'restart-admin-pw-1';

interface TaskDto {
  id: number;
  status: string;
  cron: string | null;
  next_run_at: string | null;
  result: Record<string, unknown> | null;
}
interface RunDto {
  id: number;
  status: string;
  finished_at: string | null;
  error: string | null;
}

let place: ProcessDataPlace;
let agentDir: string;
const servers: ServerProcess[] = [];
beforeAll(async () => {
  place = await createProcessDataPlace();
  agentDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-agent-'));
});
afterAll(async () => {
  for (const server of servers) {
    server.kill('SIGTERM');
    await server.exited;
  }
  await rm(agentDir, { recursive: true, force: true });
  await place?.cleanup();
});

async function startServer(): Promise<ServerProcess> {
  const server = spawnServer({ ...place.env, ADMIN_PASSWORD });
  servers.push(server);
  await server.listening;
  return server;
}

/** A JSON call against a spawned server; fails the test on a status other than `expected`. */
async function api<T>(server: ServerProcess, headers: Record<string, string>, method: string, url: string, body?: object, expected = 200): Promise<T> {
  const res = await fetch(`http://127.0.0.1:${server.port}/api/v1${url}`, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  expect(res.status, `${method} ${url}: ${text}`).toBe(expected);
  return JSON.parse(text) as T;
}

describe('a server killed while tasks run', () => {
  it('closes the runs as interrupted on the next start: the planned task in error, the recurring one scheduled again', async () => {
    const first = await startServer();
    const { token } = await api<{ token: string }>(first, {}, 'POST', '/auth/login', { username: 'admin', password: ADMIN_PASSWORD });
    const admin = { authorization: `Bearer ${token}` };
    const key = async (permissions: string) => (await api<{ key: string }>(first, admin, 'POST', '/apikeys', { name: permissions, permissions }, 201)).key;
    const writeKey = { 'x-api-key': await key('write') };

    const agent = new ReferenceAgent({
      serverUrl: `http://127.0.0.1:${first.port}`,
      apiKey: await key('agent'),
      stateFile: path.join(agentDir, 'state.json'),
      hostname: 'pve-restart',
      platform: 'linux',
      heartbeatIntervalMs: 3_600_000,
      collectSystem: () => ({ cpu: { usage_percent: 1 } }),
      backoff: { initialMs: 100, maxMs: 1000 },
      log: () => undefined,
    });
    await agent.start();
    await vi.waitFor(() => expect(agent.connected).toBe(true), { timeout: 10_000 });
    const agentId = agent.agentId!;

    const exec = { kind: 'exec', params: { command: 'sleep 30', timeout: 60 } };
    const planned = await api<TaskDto>(first, writeKey, 'POST', '/tasks', { agent_id: agentId, ...exec }, 201);
    // Once a year, so it would not come due by itself; "run now" starts it like a cron match would.
    const recurring = await api<TaskDto>(first, writeKey, 'POST', '/tasks', { agent_id: agentId, cron: '0 4 1 1 *', ...exec }, 201);
    await api(first, writeKey, 'POST', `/tasks/${recurring.id}/run`);
    for (const id of [planned.id, recurring.id]) {
      await vi.waitFor(async () => expect((await api<RunDto[]>(first, writeKey, 'GET', `/tasks/${id}/runs`))[0]?.status).toBe('running'), { timeout: 15_000 });
    }

    first.kill('SIGKILL');
    expect(await first.exited).toBeNull(); // killed by the signal, no shutdown of its own
    await agent.stop();

    const second = await startServer();
    const runOf = async (id: number) => (await api<RunDto[]>(second, writeKey, 'GET', `/tasks/${id}/runs`))[0];
    const taskOf = (id: number) => api<TaskDto>(second, writeKey, 'GET', `/tasks/${id}`);
    for (const id of [planned.id, recurring.id]) {
      await vi.waitFor(async () => expect((await runOf(id))?.status).toBe('error'), { timeout: 15_000, interval: 200 });
    }

    const plannedRun = (await runOf(planned.id))!;
    expect(plannedRun.error).toMatch(/^Interrupted: \S/);
    expect(plannedRun.finished_at).not.toBeNull();
    const plannedTask = await taskOf(planned.id);
    expect(plannedTask).toMatchObject({ status: 'error', next_run_at: null, result: { error: plannedRun.error } });

    const recurringRun = (await runOf(recurring.id))!;
    expect(recurringRun.error).toMatch(/^Interrupted: \S/);
    const recurringTask = await taskOf(recurring.id);
    expect(recurringTask).toMatchObject({ status: 'scheduled', cron: '0 4 1 1 *' });
    // The next 1 January 04:00 UTC after the interrupted run was closed.
    expect(recurringTask.next_run_at).toMatch(/^\d{4}-01-01T04:00:00\.000Z$/);
    expect(Date.parse(recurringTask.next_run_at!)).toBeGreaterThan(Date.parse(recurringRun.finished_at!));
    expect(await api<RunDto[]>(second, writeKey, 'GET', `/tasks/${recurring.id}/runs`)).toHaveLength(1);

    // The new process says what it found, once per run.
    expect(messages(second).filter((m) => m.startsWith('task run abandoned:'))).toHaveLength(2);
  }, 180_000);
});
