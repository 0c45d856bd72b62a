// The task API's contract (§10) from the outside: the 201 shape, defaults, validation of kind, cron,
// run_at and params, customer scope (404, never a leak), permissions, list filters, and the states a
// task refuses changes in (409). A FakeClock keeps "now" exact and tasks planned for later planned; the
// one task that must really run does so on the reference agent over a real socket.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';

interface TaskDto {
  id: number;
  agent_id: string;
  customer_number: string | null;
  status: string;
  run_at: string | null;
  next_run_at: string | null;
}

/** The contract's fields, `target` (issue 33: null unless the task is for a group) and `agent_wait_timeout` (issue 57). */
const TASK_FIELDS = ['id', 'name', 'agent_id', 'target', 'customer_number', 'kind', 'params', 'status', 'run_at', 'cron', 'next_run_at', 'last_run_at', 'webhook_url', 'agent_wait_timeout', 'result', 'created_at'];
/** Far enough ahead that the scheduler never runs these tasks during the file. */
const LATER = '2027-01-01T00:00:00.000Z';

const clock = new FakeClock('2026-07-01T08:00:00Z');
let s: LiveServer;
let admin: Record<string, string>;
let writeKey: string;
let readKey: string;
let scopedWriteKey: string;
let customerA: { id: number; number: string };
let customerB: { id: number; number: string };
let agentA: LiveAgent;
let agentB: string;
let unassigned: string;

type Method = 'GET' | 'POST' | 'DELETE' | 'PUT';
async function call(key: string | Record<string, string>, method: Method, url: string, payload?: object) {
  const headers = typeof key === 'string' ? apiKey(key) : key;
  const res = await s.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.json() as unknown };
}
const create = (payload: object, key: string = writeKey) => call(key, 'POST', '/tasks', payload);
async function planned(agentId: string, key: string = writeKey): Promise<TaskDto> {
  const res = await create({ agent_id: agentId, kind: 'reboot', run_at: LATER }, key);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as TaskDto;
}
const list = async (query: string, key: string = writeKey) => (await call(key, 'GET', `/tasks${query}`)).body as TaskDto[];
const task = async (id: number) => (await call(writeKey, 'GET', `/tasks/${id}`)).body as TaskDto;

beforeAll(async () => {
  s = await startLiveServer({ clock, backgroundJobs: true });
  const token = await adminToken(s);
  admin = bearer(token);
  customerA = await createCustomer(s.app, token, 'K-1001');
  customerB = await createCustomer(s.app, token, 'K-2002');
  writeKey = (await createKey(s.app, admin, 'write')).key;
  readKey = (await createKey(s.app, admin, 'read')).key;
  scopedWriteKey = (await createKey(s.app, admin, 'write', customerA.id)).key;
  agentA = await s.startAgent((await createKey(s.app, admin, 'agent', customerA.id)).key, { name: 'fw-a' });
  agentB = await s.register((await createKey(s.app, admin, 'agent', customerB.id)).key, 'fw-b');
  unassigned = await s.register((await createKey(s.app, admin, 'agent')).key, 'fw-loose');
});
afterAll(() => s?.close());

describe('creating a task', () => {
  it('answers 201 with every field of the contract, run_at defaulting to now and the customer number copied', async () => {
    const res = await create({ agent_id: agentA.id, kind: 'exec', params: { command: 'echo shape' } });
    expect(res.status).toBe(201);
    const body = res.body as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual([...TASK_FIELDS].sort());
    const now = clock.now().toISOString();
    expect(body).toMatchObject({
      agent_id: agentA.id,
      target: null,
      customer_number: customerA.number,
      kind: 'exec',
      params: { command: 'echo shape', timeout: 60 },
      status: 'scheduled',
      run_at: now,
      cron: null,
      next_run_at: now,
      last_run_at: null,
      webhook_url: null,
      result: null,
      created_at: now,
    });
    expect(body.id).toEqual(expect.any(Number));
    expect(body.name).toEqual(expect.any(String));
    // Due at once: it runs on the connected agent (the FakeClock does not need to move).
    await vi.waitFor(async () => expect((await task(body.id as number)).status).toBe('completed'), { timeout: 10_000 });
  });

  it('gives a recurring task no run_at and its next cron match as next_run_at', async () => {
    const res = await create({ agent_id: agentB, kind: 'update', cron: '30 2 * * 0' });
    expect(res.status).toBe(201);
    // 2026-07-01 is a Wednesday; the next Sunday 02:30 UTC is 2026-07-05.
    expect(res.body).toMatchObject({ run_at: null, cron: '30 2 * * 0', next_run_at: '2026-07-05T02:30:00.000Z', params: { reboot: false } });
  });

  it('copies the customer number at creation: null for an unassigned agent, unchanged when the agent moves later', async () => {
    const roaming = await s.register((await createKey(s.app, admin, 'agent')).key, 'fw-roaming');
    const before = await planned(roaming);
    expect(before.customer_number).toBeNull();
    expect((await call(admin, 'PUT', `/agents/${roaming}/customer`, { customer_id: customerB.id })).status).toBe(200);
    const after = await planned(roaming);
    expect(after.customer_number).toBe(customerB.number);
    expect((await task(before.id)).customer_number).toBeNull();
  });

  it.each([
    ['an unknown kind', { kind: 'format_disk' }, 'kind'],
    ['a cron of three fields', { kind: 'reboot', cron: '* * *' }, 'cron'],
    ['a minute of 61', { kind: 'reboot', cron: '61 * * * *' }, 'cron'],
    ['a six-field cron (seconds)', { kind: 'reboot', cron: '0 */5 * * * *' }, 'cron'],
    ['run_at and cron together', { kind: 'reboot', run_at: LATER, cron: '0 3 * * *' }, 'cron'],
    ['dist_upgrade without params.version', { kind: 'dist_upgrade', params: { reboot: true } }, 'params.version'],
    ['exec without params', { kind: 'exec' }, 'params'],
    ['exec without command', { kind: 'exec', params: { timeout: 10 } }, 'params.command'],
    ['an unparseable run_at', { kind: 'reboot', run_at: 'tomorrow' }, 'run_at'],
  ])('refuses %s with 400 and creates nothing', async (_what, fields, path) => {
    const before = await list(`?agent_id=${agentB}&limit=1000`);
    const res = await create({ agent_id: agentB, ...fields });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: expect.arrayContaining([expect.objectContaining({ path: expect.stringMatching(new RegExp(`^${path}`)) })]) });
    expect(await list(`?agent_id=${agentB}&limit=1000`)).toHaveLength(before.length);
  });

  it('answers 404 for an agent that does not exist', async () => {
    const res = await create({ agent_id: 'feedfacefeedface', kind: 'reboot' });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('refuses a read key with 403', async () => {
    const res = await create({ agent_id: agentB, kind: 'reboot', run_at: LATER }, readKey);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'FORBIDDEN' });
    expect((await call(readKey, 'GET', '/tasks')).status).toBe(200);
  });
});

describe('customer scope', () => {
  it('lets a customer-scoped key create for its own agents only, with 404 for others', async () => {
    expect((await create({ agent_id: agentB, kind: 'reboot', run_at: LATER }, scopedWriteKey)).status).toBe(404);
    expect((await create({ agent_id: unassigned, kind: 'reboot', run_at: LATER }, scopedWriteKey)).status).toBe(404);
    const own = await planned(agentA.id, scopedWriteKey);
    expect(own.customer_number).toBe(customerA.number);
  });

  it("hides other customers' tasks from lists and answers 404 for each of their routes", async () => {
    const foreign = await planned(agentB);
    const loose = await planned(unassigned);
    const seen = await list('?limit=1000', scopedWriteKey);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((t) => t.agent_id === agentA.id)).toBe(true);
    expect(await list(`?customer_id=${customerB.id}`, scopedWriteKey)).toEqual([]);
    expect(await list(`?agent_id=${agentB}`, scopedWriteKey)).toEqual([]);

    for (const id of [foreign.id, loose.id]) {
      expect((await call(scopedWriteKey, 'GET', `/tasks/${id}`)).status).toBe(404);
      expect((await call(scopedWriteKey, 'GET', `/tasks/${id}/runs`)).status).toBe(404);
      expect((await call(scopedWriteKey, 'POST', `/tasks/${id}/run`)).status).toBe(404);
      expect((await call(scopedWriteKey, 'DELETE', `/tasks/${id}`)).status).toBe(404);
      expect(await task(id)).toMatchObject({ status: 'scheduled', next_run_at: LATER });
    }
  });
});

describe('listing tasks', () => {
  it('filters by status, agent_id and customer_id, newest first, and honours limit', async () => {
    const kept = await planned(agentB);
    const cancelled = await planned(agentB);
    expect((await call(writeKey, 'DELETE', `/tasks/${cancelled.id}`)).body).toMatchObject({ status: 'cancelled', next_run_at: null });
    const loose = await planned(unassigned);

    const byStatus = await list('?status=cancelled&limit=1000');
    expect(byStatus.map((t) => t.id)).toContain(cancelled.id);
    expect(byStatus.every((t) => t.status === 'cancelled')).toBe(true);

    const byAgent = await list(`?agent_id=${agentB}&limit=1000`);
    expect(byAgent.map((t) => t.id)).toEqual(expect.arrayContaining([kept.id, cancelled.id]));
    expect(byAgent.every((t) => t.agent_id === agentB)).toBe(true);
    expect(byAgent.map((t) => t.id)).toEqual([...byAgent.map((t) => t.id)].sort((a, b) => b - a));

    const byCustomer = await list(`?customer_id=${customerB.id}&limit=1000`);
    expect(byCustomer.map((t) => t.id)).toContain(kept.id);
    expect(byCustomer.map((t) => t.id)).not.toContain(loose.id);
    expect(await list(`?customer_id=${customerB.id}&status=cancelled&agent_id=${agentB}`)).toEqual([expect.objectContaining({ id: cancelled.id })]);

    const newest = await list('?limit=1');
    expect(newest).toEqual([expect.objectContaining({ id: loose.id })]);
    expect((await call(writeKey, 'GET', '/tasks?limit=5000')).status).toBe(200); // clamped to the maximum
    for (const bad of ['limit=0', 'limit=1.5', 'limit=x', 'status=done', 'agent_id=nothex', 'customer_id=0']) {
      expect((await call(writeKey, 'GET', `/tasks?${bad}`)).status, bad).toBe(400);
    }
  });
});

describe('states that forbid a change', () => {
  it('answers 409 to cancelling or re-running a running task, and to running a cancelled one', async () => {
    const created = await create({ agent_id: agentA.id, kind: 'exec', params: { command: 'sleep 5', timeout: 30 } });
    const { id } = created.body as TaskDto;
    await vi.waitFor(async () => expect((await task(id)).status).toBe('running'), { timeout: 10_000 });

    const cancel = await call(writeKey, 'DELETE', `/tasks/${id}`);
    expect(cancel.status).toBe(409);
    expect(cancel.body).toMatchObject({ code: 'CONFLICT' });
    expect((await call(writeKey, 'POST', `/tasks/${id}/run`)).status).toBe(409);
    expect((await task(id)).status).toBe('running');

    // The command was not disturbed: it finishes, and only then can the task be cancelled.
    await vi.waitFor(async () => expect((await task(id)).status).toBe('completed'), { timeout: 20_000, interval: 200 });
    const runs = (await call(writeKey, 'GET', `/tasks/${id}/runs`)).body as Array<{ status: string; result: { exit_code: number } }>;
    expect(runs).toEqual([expect.objectContaining({ status: 'completed', result: expect.objectContaining({ exit_code: 0 }) })]);
    expect((await call(writeKey, 'DELETE', `/tasks/${id}`)).body).toMatchObject({ status: 'cancelled' });

    const rerun = await call(writeKey, 'POST', `/tasks/${id}/run`);
    expect(rerun.status).toBe(409);
    expect(rerun.body).toMatchObject({ code: 'CONFLICT', error: expect.stringMatching(/cancelled/) });
    expect(await task(id)).toMatchObject({ status: 'cancelled', next_run_at: null });
  }, 40_000);
});
