// Group tasks (issue 33, Build 2): a task may target a customer or a platform instead of one agent. Each
// run resolves the target at that moment, runs as a bulk action (waiting for agents that are not
// connected) and lists one result per agent; scope rules hold for who may create and see them.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';

let s: LiveServer;
let admin: Record<string, string>;
let customer: number;
let agentKey: string;
let otherWrite: string;
const agents: LiveAgent[] = [];
let lateId: string;

const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object, headers = admin) => s.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });
const task = async (id: number) => (await call('GET', `/tasks/${id}`)).json() as { status: string; agent_id: string | null; target: unknown; result: { bulk_action_id?: number; agents?: Array<{ agent_name: string; status: string; exit_code: number | null }> } | null };

beforeAll(async () => {
  s = await startLiveServer({ backgroundJobs: true });
  const token = await adminToken(s);
  admin = bearer(token);
  customer = (await createCustomer(s.app, token, 'GT-1', 'Group GmbH')).id;
  const other = (await createCustomer(s.app, token, 'GT-2')).id;
  otherWrite = (await createKey(s.app, admin, 'write', other)).key;
  agentKey = (await createKey(s.app, admin, 'agent', customer)).key;
  for (const name of ['group-1', 'group-2']) agents.push(await s.startAgent(agentKey, { name }));
  const late = await s.startAgent(agentKey, { name: 'group-late' });
  lateId = late.id;
  await late.stop();
});
afterAll(() => s.close());

describe('group tasks', () => {
  it('runs on every agent of a customer at run time, waits for the one that is away, and lists a result per agent', async () => {
    const made = await call('POST', '/tasks', { target: { customer_id: customer }, kind: 'exec', name: 'whoami everywhere', params: { command: 'echo group-run' } });
    expect(made.statusCode, made.body).toBe(201);
    const created = made.json() as { id: number; agent_id: string | null; target: unknown; customer_number: string };
    expect(created).toMatchObject({ agent_id: null, target: { customer_id: customer }, customer_number: 'GT-1' });
    await vi.waitFor(async () => expect((await task(created.id)).status).toBe('running'), { timeout: 10_000 });
    // The running run names its bulk action at once, so its page can link to it (issue 57, item 18).
    const runs = async () => (await call('GET', `/tasks/${created.id}/runs`)).json() as Array<{ finished_at: string | null; result: { bulk_action_id?: number } | null }>;
    await vi.waitFor(async () => expect((await runs())[0]).toMatchObject({ finished_at: null, result: { bulk_action_id: expect.any(Number) } }), { timeout: 10_000 });
    // The third agent comes back while the run waits for it.
    agents.push(await s.startAgent(agentKey, { name: 'group-late', agentId: lateId }));
    await vi.waitFor(async () => expect((await task(created.id)).status).toBe('completed'), { timeout: 20_000, interval: 250 });
    const { result } = await task(created.id);
    expect(result!.agents!.map((a) => [a.agent_name, a.status, a.exit_code]).sort()).toEqual([
      ['group-1', 'done', 0],
      ['group-2', 'done', 0],
      ['group-late', 'done', 0],
    ]);
    const bulk = (await call('GET', `/bulk-actions/${result!.bulk_action_id}`)).json() as { actor: string; task_id: number };
    expect(bulk).toMatchObject({ actor: `task ${created.id} (whoami everywhere)`, task_id: created.id });
    const history = (await call('GET', '/history?q=group-run')).json() as Array<{ source: string }>;
    expect(history).toHaveLength(3);
    expect(((await call('GET', `/tasks?customer_id=${customer}`)).json() as Array<{ id: number }>).map((t) => t.id)).toContain(created.id);
  });

  it('a group that matches no agent when it runs ends in error with the reason; a failing agent makes the run an error', async () => {
    const none = (await call('POST', '/tasks', { target: { platform: 'windows' }, kind: 'reboot' })).json() as { id: number };
    await vi.waitFor(async () => expect(await task(none.id)).toMatchObject({ status: 'error', result: { error: 'No agents match the target' } }), { timeout: 10_000 });
    const failing = (await call('POST', '/tasks', { target: { customer_id: customer, platform: 'linux' }, kind: 'exec', params: { command: 'exit 4' } })).json() as { id: number };
    await vi.waitFor(async () => expect((await task(failing.id)).status).toBe('error'), { timeout: 15_000 });
    expect((await task(failing.id)).result!.agents!.every((a) => a.status === 'failed' && a.exit_code === 4)).toBe(true);
    const [run] = (await call('GET', `/tasks/${failing.id}/runs`)).json() as Array<{ error: string }>;
    expect(run!.error).toBe('3 of 3 agents failed');
  });

  it('a tag group runs on the agents carrying the tag when it runs, as does a bulk action with a tag target', async () => {
    const tagged = await call('PATCH', `/agents/${agents[0]!.id}`, { tags: ['Kasse'] });
    expect(tagged.statusCode, tagged.body).toBe(200);
    const made = (await call('POST', '/tasks', { target: { tag: 'kasse' }, kind: 'exec', params: { command: 'echo till' } })).json() as { id: number };
    await vi.waitFor(async () => expect((await task(made.id)).status).toBe('completed'), { timeout: 15_000 });
    expect((await task(made.id)).result!.agents!.map((a) => a.agent_name)).toEqual(['group-1']);
    const bulk = await call('POST', '/bulk-actions', { action: 'update_check', target: { tag: 'KASSE' } });
    expect((bulk.json() as { results: Array<{ agent_name: string }> }).results.map((r) => r.agent_name)).toEqual(['group-1']);
  });

  it('keeps groups within the caller\'s scope and the kinds a group can run', async () => {
    const theirs = apiKey(otherWrite);
    expectError(await call('POST', '/tasks', { target: { customer_id: customer }, kind: 'exec', params: { command: 'id' } }, theirs), 404, 'NOT_FOUND');
    // A scoped key's platform group stays in its own customer, and others do not see it.
    const own = await call('POST', '/tasks', { target: { platform: 'linux' }, kind: 'update' }, theirs);
    expect(own.statusCode, own.body).toBe(201);
    const ownTask = own.json() as { id: number; target: { customer_id: number } };
    expect(ownTask.target.customer_id).not.toBe(customer);
    expectError(await call('GET', `/tasks/${ownTask.id}`, undefined, apiKey((await createKey(s.app, admin, 'read', customer)).key)), 404, 'NOT_FOUND');
    expectError(await call('POST', '/tasks', { target: { customer_id: customer }, kind: 'backup' }), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', '/tasks', { target: {}, kind: 'exec', params: { command: 'id' } }), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', '/tasks', { agent_id: agents[0]!.id, target: { customer_id: customer }, kind: 'exec', params: { command: 'id' } }), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', '/tasks', { kind: 'exec', params: { command: 'id' } }), 400, 'VALIDATION_ERROR');
  });
});
