// PATCH /tasks/{id} (issue 33): a recurring task could only be cancelled; now its name, params, schedule
// and webhook can be changed. Fields left out stay; a new schedule makes the task scheduled again from its
// next time; params are checked against the kind; hostile or empty input is 400 and changes nothing; a
// running or cancelled task is 409; other customers' tasks are 404; read keys are 403.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';

interface TaskDto {
  id: number;
  name: string;
  kind: string;
  params: Record<string, unknown>;
  status: string;
  run_at: string | null;
  cron: string | null;
  next_run_at: string | null;
  webhook_url: string | null;
}

const clock = new FakeClock('2026-07-01T08:00:00Z');
let t: TestApp;
let admin: Record<string, string>;
let agentId: string;
let otherScope: Record<string, string>;
let readOnly: Record<string, string>;

async function call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers = admin) {
  const res = await t.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
  return { status: res.statusCode, body: res.json() as TaskDto & { code?: string; error?: string; request_id?: string; details?: unknown[] } };
}

async function nightly(): Promise<TaskDto> {
  const res = await call('POST', '/tasks', { agent_id: agentId, kind: 'exec', params: { command: 'uptime' }, cron: '0 3 * * *', name: 'Nightly uptime', webhook_url: 'https://203.0.113.5/hook' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

beforeAll(async () => {
  t = await buildTestApp({ clock, env: { WEBHOOK_ALLOW_LOOPBACK: 'false' } });
  const token = await adminToken(t);
  admin = bearer(token);
  const customer = await createCustomer(t.app, token, '10001');
  const other = await createCustomer(t.app, token, '20002');
  const agentKey = apiKey((await createKey(t.app, admin, 'agent', customer.id)).key);
  const reg = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: agentKey, payload: { hostname: 'fw-edit', name: 'fw-edit', platform: 'freebsd' } });
  expect(reg.statusCode, reg.body).toBe(200);
  agentId = reg.json().agent_id;
  otherScope = apiKey((await createKey(t.app, admin, 'write', other.id)).key);
  readOnly = apiKey((await createKey(t.app, admin, 'read')).key);
});
afterAll(() => t.close());

describe('editing a task', () => {
  it('changes name, params, cron and webhook of a recurring task, keeping what is left out', async () => {
    const task = await nightly();
    const res = await call('PATCH', `/tasks/${task.id}`, { name: 'Evening uptime', params: { command: 'uptime -p', timeout: 30 }, cron: '30 18 * * 1-5', webhook_url: null });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: task.id, name: 'Evening uptime', kind: 'exec', params: { command: 'uptime -p', timeout: 30 }, cron: '30 18 * * 1-5', run_at: null, webhook_url: null, status: 'scheduled' });
    // 2026-07-01 is a Wednesday: the next 18:30 UTC on a weekday is the same day.
    expect(res.body.next_run_at).toBe('2026-07-01T18:30:00.000Z');
    expect((await call('GET', `/tasks/${task.id}`)).body).toEqual(res.body);

    const renamed = await call('PATCH', `/tasks/${task.id}`, { name: 'Only the name' });
    expect(renamed.body).toMatchObject({ name: 'Only the name', cron: '30 18 * * 1-5', params: { command: 'uptime -p', timeout: 30 }, next_run_at: '2026-07-01T18:30:00.000Z' });
  });

  it('turns a recurring task into a one-off and back', async () => {
    const task = await nightly();
    const once = await call('PATCH', `/tasks/${task.id}`, { run_at: '2026-08-01T10:00:00Z' });
    expect(once.body).toMatchObject({ cron: null, run_at: '2026-08-01T10:00:00.000Z', next_run_at: '2026-08-01T10:00:00.000Z' });
    const again = await call('PATCH', `/tasks/${task.id}`, { cron: '0 4 * * *' });
    expect(again.body).toMatchObject({ cron: '0 4 * * *', run_at: null, next_run_at: '2026-07-02T04:00:00.000Z' });
  });

  it('records the edit in the audit log, naming the task', async () => {
    const task = await nightly();
    await call('PATCH', `/tasks/${task.id}`, { name: 'Audited' });
    const audit = await t.app.inject({ method: 'GET', url: '/api/v1/audit?limit=1', headers: admin });
    expect(audit.json()[0]).toMatchObject({ action: 'task.update', method: 'PATCH', target: `task Audited (#${task.id})` });
  });

  it('refuses bad input with 400 and the contract body, changing nothing', async () => {
    const task = await nightly();
    const bad: unknown[] = [
      {},
      { cron: 'every day' },
      { cron: '0 3 * * *', run_at: '2026-08-01T10:00:00Z' },
      { params: { command: '' } },
      { params: { nope: 1 } },
      { kind: 'reboot' },
      { agent_id: agentId },
      { name: 'x'.repeat(201) },
      { webhook_url: 'http://169.254.169.254/latest' },
      { webhook_url: 'http://127.0.0.1:9/' },
      { run_at: 'tomorrow' },
      [],
      { name: 'a\u0000b' },
    ];
    for (const body of bad) {
      const res = await call('PATCH', `/tasks/${task.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toMatchObject({ error: expect.any(String), code: expect.any(String), request_id: expect.any(String) });
    }
    expect((await call('GET', `/tasks/${task.id}`)).body).toEqual(task);
  });

  it('is 409 while the task runs and once it is cancelled, 404 for an unknown task or another customer, 403 for a read key', async () => {
    const task = await nightly();
    await t.db.db.updateTable('tasks').set({ status: 'running' }).where('id', '=', task.id).execute();
    expect((await call('PATCH', `/tasks/${task.id}`, { name: 'During the run' })).status).toBe(409);
    await t.db.db.updateTable('tasks').set({ status: 'scheduled' }).where('id', '=', task.id).execute();
    expect((await call('DELETE', `/tasks/${task.id}`)).status).toBe(200);
    const cancelled = await call('PATCH', `/tasks/${task.id}`, { name: 'After cancelling' });
    expect(cancelled.status).toBe(409);
    expect(cancelled.body.code).toBe('CONFLICT');
    expect((await call('PATCH', '/tasks/999999', { name: 'x' })).status).toBe(404);
    expect((await call('PATCH', `/tasks/${task.id}`, { name: 'x' }, otherScope)).status).toBe(404);
    expect((await call('PATCH', `/tasks/${task.id}`, { name: 'x' }, readOnly)).status).toBe(403);
    expect((await call('GET', `/tasks/${task.id}`)).body.name).toBe('Nightly uptime');
  });
});
