// Tasks on a FakeClock with the reference agent (contract §10, issue 11 acceptance 1 and 2): a planned
// task runs at its time and not before; a `*/5 * * * *` task runs at each 5-minute mark with one run
// each; cancel stops future runs; an update task whose agent comes back completes with
// health_check.agent_online true, one whose agent stays away completes with a warning.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { BACKGROUND_LOOPS } from './helpers/app.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';

interface TaskDto {
  id: number;
  status: string;
  next_run_at: string | null;
  last_run_at: string | null;
  result: Record<string, unknown> | null;
}
interface RunDto {
  id: number;
  status: string;
  started_at: string;
  finished_at: string | null;
  waiting_until: string | null;
  result: Record<string, unknown> | null;
  error: string | null;
}

const clock = new FakeClock('2026-06-01T09:58:00Z');
let s: LiveServer;
let writeKey: string;
let agentKey: string;
let agent: LiveAgent;

const call = async (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) => {
  const res = await s.app.inject({ method, url: `/api/v1${url}`, headers: apiKey(writeKey), ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.json() as unknown };
};
const task = async (id: number) => (await call('GET', `/tasks/${id}`)).body as TaskDto;
const runs = async (id: number) => (await call('GET', `/tasks/${id}/runs`)).body as RunDto[];

/** Lets every loop settle on the clock (plus `extra` sleepers, e.g. a health check), then moves it. */
async function advance(ms: number, extra = 0): Promise<void> {
  await vi.waitFor(() => expect(clock.pendingSleepers).toBeGreaterThanOrEqual(BACKGROUND_LOOPS + extra));
  await clock.advance(ms);
}

beforeAll(async () => {
  s = await startLiveServer({ clock, backgroundJobs: true });
  const admin = bearer(await adminToken(s));
  writeKey = (await createKey(s.app, admin, 'write')).key;
  agentKey = (await createKey(s.app, admin, 'agent')).key;
  agent = await s.startAgent(agentKey, { name: 'pve-tasks' });
});
afterAll(() => s?.close());

describe('planned and recurring tasks', () => {
  it('runs a task planned for T at T, not before', async () => {
    const created = await call('POST', '/tasks', { agent_id: agent.id, kind: 'exec', params: { command: 'echo planned' }, run_at: '2026-06-01T10:00:00Z' });
    expect(created.status).toBe(201);
    const { id } = created.body as TaskDto;
    expect(created.body).toMatchObject({ status: 'scheduled', next_run_at: '2026-06-01T10:00:00.000Z', run_at: '2026-06-01T10:00:00.000Z', cron: null });

    await advance(119_000); // 09:59:59
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await runs(id)).toEqual([]);
    await advance(1_000); // 10:00:00
    await vi.waitFor(async () => expect((await task(id)).status).toBe('completed'));
    const [run] = await runs(id);
    expect(run).toMatchObject({ status: 'completed', started_at: '2026-06-01T10:00:00.000Z', error: null });
    expect(run!.result).toMatchObject({ exit_code: 0, stdout: 'planned\n' });
  });

  it('runs */5 at each 5-minute mark, one run each time, until cancelled', async () => {
    const created = await call('POST', '/tasks', { agent_id: agent.id, kind: 'exec', params: { command: 'echo tick' }, cron: '*/5 * * * *' });
    const { id, next_run_at: first } = created.body as TaskDto;
    expect(first).toBe('2026-06-01T10:05:00.000Z');
    for (const mark of ['10:05', '10:10', '10:15']) {
      const now = clock.now().getTime();
      const due = new Date(`2026-06-01T${mark}:00Z`).getTime();
      await advance(due - now);
      await vi.waitFor(async () => expect((await runs(id)).map((r) => r.started_at)).toContain(`2026-06-01T${mark}:00.000Z`));
      await vi.waitFor(async () => expect((await task(id)).status).toBe('scheduled'));
    }
    expect((await runs(id)).map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    expect((await task(id)).next_run_at).toBe('2026-06-01T10:20:00.000Z');

    const cancelled = await call('DELETE', `/tasks/${id}`);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', next_run_at: null });
    await advance(new Date('2026-06-01T10:31:00Z').getTime() - clock.now().getTime());
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await runs(id)).toHaveLength(3);
    expect((await call('POST', `/tasks/${id}/run`)).status).toBe(409);
  });

  it('fails the run at once with a reason when the agent is not connected at the due time and the task does not wait', async () => {
    const away = await s.register(agentKey, 'fw-away');
    const { id } = (await call('POST', '/tasks', { agent_id: away, kind: 'reboot', agent_wait_timeout: 0 })).body as TaskDto;
    await vi.waitFor(async () => expect((await task(id)).status).toBe('error'));
    expect((await runs(id))[0]).toMatchObject({ status: 'error', error: 'The agent was not connected when the task was due' });
  });
});

// Issue 57: a run due while its agent reconnected (an instance restart) failed at once. It now waits.
describe('an agent away at the due time', () => {
  const waitingRun = async (id: number) => {
    await vi.waitFor(async () => expect((await runs(id))[0]?.waiting_until ?? null).not.toBeNull());
    return (await runs(id))[0]!;
  };

  it('is waited for (600 s by default), and the run goes on as soon as it connects', async () => {
    const lateId = await s.register(agentKey, 'fw-late');
    const created = await call('POST', '/tasks', { agent_id: lateId, kind: 'exec', params: { command: 'echo late' } });
    expect(created.body).toMatchObject({ agent_wait_timeout: 600 });
    const { id } = created.body as TaskDto;
    const run = await waitingRun(id);
    expect(run).toMatchObject({ status: 'running', finished_at: null });
    expect(Date.parse(run.waiting_until!) - Date.parse(run.started_at)).toBe(600_000);
    expect((await task(id)).status).toBe('running');

    const late = await s.startAgent(agentKey, { agentId: lateId, hostname: 'fw-late' });
    await vi.waitFor(async () => expect((await task(id)).status).toBe('completed'));
    const all = await runs(id);
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ id: run.id, status: 'completed', error: null, waiting_until: null });
    expect(all[0]!.result).toMatchObject({ exit_code: 0, stdout: 'late\n' });
    expect(late.commands).toEqual(['exec']);
  });

  it('ends the run in error with the reason when the agent does not connect within the task\'s bound', async () => {
    const gone = await s.register(agentKey, 'fw-gone');
    const { id } = (await call('POST', '/tasks', { agent_id: gone, kind: 'reboot', agent_wait_timeout: 120 })).body as TaskDto;
    await waitingRun(id);
    await advance(119_000, 1); // the run's own sleeper
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await task(id)).status).toBe('running');
    await advance(1_000, 1);
    await vi.waitFor(async () => expect((await task(id)).status).toBe('error'));
    expect((await runs(id))[0]).toMatchObject({
      status: 'error',
      waiting_until: null,
      error: 'The agent was not connected when the task was due and did not connect within 120 s',
    });
  });

  it('can be cancelled while its run waits: the run ends cancelled and nothing reaches the agent when it connects', async () => {
    const laterId = await s.register(agentKey, 'fw-cancelled');
    const { id } = (await call('POST', '/tasks', { agent_id: laterId, kind: 'reboot' })).body as TaskDto;
    await waitingRun(id);
    const cancelled = await call('DELETE', `/tasks/${id}`);
    expect(cancelled).toMatchObject({ status: 200, body: { status: 'cancelled', next_run_at: null } });
    expect((await runs(id))[0]).toMatchObject({ status: 'cancelled', waiting_until: null, error: 'Cancelled while the run waited for the agent' });

    const later = await s.startAgent(agentKey, { agentId: laterId, hostname: 'fw-cancelled' });
    // Another task for it runs to the end: the cancelled one's wait, woken by the same connection, sent nothing.
    const other = (await call('POST', '/tasks', { agent_id: laterId, kind: 'exec', params: { command: 'echo after' } })).body as TaskDto;
    await vi.waitFor(async () => expect((await task(other.id)).status).toBe('completed'));
    expect(later.commands).toEqual(['exec']);
    expect(await task(id)).toMatchObject({ status: 'cancelled' });
    expect(await runs(id)).toHaveLength(1);
  });

  it('takes the bound from 0 to 86,400 s, for single-agent tasks only', async () => {
    for (const bad of [-1, 86_401, 1.5]) expect((await call('POST', '/tasks', { agent_id: agent.id, kind: 'reboot', agent_wait_timeout: bad })).status).toBe(400);
    const group = await call('POST', '/tasks', { target: { platform: 'linux' }, kind: 'reboot', agent_wait_timeout: 60 });
    expect(group).toMatchObject({ status: 400, body: { code: 'VALIDATION_ERROR', details: [{ path: 'agent_wait_timeout' }] } });
    const planned = (await call('POST', '/tasks', { agent_id: agent.id, kind: 'reboot', run_at: '2027-01-01T00:00:00Z' })).body as TaskDto;
    const edited = await s.app.inject({ method: 'PATCH', url: `/api/v1/tasks/${planned.id}`, headers: apiKey(writeKey), payload: { agent_wait_timeout: 3600 } });
    expect(edited.json()).toMatchObject({ agent_wait_timeout: 3600 });
  });
});

describe('update tasks and the health check', () => {
  it('completes with agent_online true when the agent comes back, with a warning when it stays away', async () => {
    // The reference agent reboots after an update with reboot: its socket closes and it connects again.
    const back = await call('POST', '/tasks', { agent_id: agent.id, kind: 'update', params: { reboot: true }, health_check_timeout: 300 });
    const backId = (back.body as TaskDto).id;
    await vi.waitFor(async () => expect((await task(backId)).status).toBe('completed'), { timeout: 10_000 });
    expect((await task(backId)).result).toMatchObject({ health_check: { agent_online: true } });

    // This agent stops for good after its update is answered: the health check ends with it away.
    const leaving = await s.startAgent(agentKey, { name: 'fw-leaving' });
    leaving.agent.on('command', (c: { command: string }) => {
      if (c.command === 'update') setTimeout(() => void leaving.stop(), 10);
    });
    const away = await call('POST', '/tasks', { agent_id: leaving.id, kind: 'security_update', health_check_timeout: 120 });
    const awayId = (away.body as TaskDto).id;
    await vi.waitFor(async () => expect((await runs(awayId))[0]?.status).toBe('running'));
    await vi.waitFor(async () => expect((await call('GET', '/hub/status')).body).not.toMatchObject({ agents: expect.arrayContaining([expect.objectContaining({ agent_id: leaving.id })]) }));
    await advance(120_000, 1); // the health check's own sleeper
    await vi.waitFor(async () => expect((await task(awayId)).status).toBe('completed_with_warning'));
    const result = (await task(awayId)).result as { health_check: { agent_online: boolean; checked_at: string } };
    expect(result.health_check).toEqual({ agent_online: false, checked_at: clock.now().toISOString() });
  });
});
