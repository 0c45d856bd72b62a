// Bulk actions (issue 33, Build 2) against reference agents over real sockets: one exec over a customer's
// agents gives one result per agent; an agent that is offline waits ("waiting") and runs when it
// reconnects; a wait that ends leaves it "not_connected"; results download as CSV (formula cells
// defused); a script's platforms are checked against the target before it starts; request_update needs no connection; a scoped caller
// reaches only its customer.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';
import { ShiftedClock } from './helpers/shifted-clock.js';

const clock = new ShiftedClock();
let s: LiveServer;
let admin: Record<string, string>;
let customer: number;
let agentKey: string;
let otherWrite: string;
const live: LiveAgent[] = [];
let sleeperId: string;

interface Result {
  agent_id: string;
  agent_name: string;
  status: string;
  result: { exit_code?: number; stdout?: string } | null;
  error: string | null;
  history_id: number | null;
}
interface Action {
  id: number;
  finished: boolean;
  counts: Record<string, number>;
  results: Result[];
}

const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object, headers = admin) =>
  s.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });

async function make(body: object, headers = admin): Promise<Action> {
  const res = await call('POST', '/bulk-actions', body, headers);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as Action;
}

const follow = (id: number) => call('GET', `/bulk-actions/${id}`).then((r) => r.json() as Action);
const byName = (a: Action) => Object.fromEntries(a.results.map((r) => [r.agent_name, r]));

beforeAll(async () => {
  s = await startLiveServer({ clock });
  const token = await adminToken(s);
  admin = bearer(token);
  customer = (await createCustomer(s.app, token, 'BU-1', 'Bulk GmbH')).id;
  const other = (await createCustomer(s.app, token, 'BU-2')).id;
  otherWrite = (await createKey(s.app, admin, 'write', other)).key;
  agentKey = (await createKey(s.app, admin, 'agent', customer)).key;
  for (const name of ['bulk-1', 'bulk-2', 'bulk-3']) live.push(await s.startAgent(agentKey, { name }));
  // Registered, then gone: offline when the actions start.
  const sleeper = await s.startAgent(agentKey, { name: 'bulk-sleeper' });
  sleeperId = sleeper.id;
  await sleeper.stop();
  await vi.waitFor(async () => expect(((await call('GET', '/hub/status')).json() as { agents: unknown[] }).agents).toHaveLength(3));
});
afterAll(() => s.close());

describe('bulk actions', () => {
  it('runs an exec on every agent of a customer; the offline one waits and runs when it reconnects', async () => {
    const made = await make({ action: 'exec', params: { command: 'echo \'=HYPERLINK("http://evil")\'; echo "hi from $(hostname)"' }, target: { customer_id: customer } });
    expect(made.results.map((r) => r.agent_name).sort()).toEqual(['bulk-1', 'bulk-2', 'bulk-3', 'bulk-sleeper']);
    await vi.waitFor(async () => expect((await follow(made.id)).counts).toMatchObject({ done: 3, waiting: 1 }), { timeout: 15_000 });
    const now = byName(await follow(made.id));
    expect(now['bulk-1']).toMatchObject({ status: 'done', result: { exit_code: 0, stdout: expect.stringContaining('\nhi from ') }, history_id: expect.any(Number) });
    expect(now['bulk-sleeper']).toMatchObject({ status: 'waiting', result: null });

    // The results as CSV: one row per agent, a formula defused.
    const csv = await call('GET', `/bulk-actions/${made.id}/results.csv`);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const lines = csv.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe('agent,agent_id,status,exit_code,error,output,started_at,finished_at');
    expect(lines).toHaveLength(5);
    expect(lines.find((l) => l.startsWith('bulk-sleeper,'))).toMatch(/^bulk-sleeper,[0-9a-f]+,waiting,,,,,$/);
    expect(lines.find((l) => l.startsWith('bulk-2,'))).toMatch(/^bulk-2,[0-9a-f]+,done,0,,"'=HYPERLINK\(""http:\/\/evil""\)",20\d\d-/);

    // The history names the bulk action's source and who made it.
    const entry = (await call('GET', `/history/${now['bulk-2']!.history_id}`)).json() as { source: string; actor: string; stdout: string };
    expect(entry).toMatchObject({ source: 'bulk', actor: 'admin' });
    expect(entry.stdout).toMatch(/^=HYPERLINK/);

    const back = await s.startAgent(agentKey, { name: 'bulk-sleeper', agentId: sleeperId });
    live.push(back);
    await vi.waitFor(async () => expect(byName(await follow(made.id))['bulk-sleeper']).toMatchObject({ status: 'done', result: { exit_code: 0 } }), { timeout: 15_000 });
    expect((await follow(made.id)).finished).toBe(true);
  });

  it('an agent that does not connect before the wait ends is not connected; with no wait at once; a waiting one can be cancelled', async () => {
    await live.pop()!.stop(); // bulk-sleeper again
    await vi.waitFor(async () => expect(((await call('GET', '/hub/status')).json() as { agents: unknown[] }).agents).toHaveLength(3));

    const noWait = await make({ action: 'update_check', target: { agent_ids: [sleeperId, live[0]!.id] }, wait_hours: 0 });
    expect(byName(noWait)['bulk-sleeper']).toMatchObject({ status: 'not_connected', error: expect.stringContaining('does not wait') });
    await vi.waitFor(async () => expect(byName(await follow(noWait.id))['bulk-1']!.status).toBe('done'), { timeout: 15_000 });

    const waits = await make({ action: 'exec', params: { command: 'true' }, target: { agent_ids: [sleeperId] }, wait_hours: 1 });
    const cancelMe = await make({ action: 'exec', params: { command: 'true' }, target: { agent_ids: [sleeperId] } });
    expect((await call('DELETE', `/bulk-actions/${cancelMe.id}`)).json()).toEqual({ cancelled: 1 });
    clock.offsetMs = 2 * 3_600_000;
    try {
      await make({ action: 'request_update', target: { agent_ids: [live[0]!.id] } }); // any new action makes the runner look
      await vi.waitFor(async () => expect(byName(await follow(waits.id))['bulk-sleeper']).toMatchObject({ status: 'not_connected', error: expect.stringContaining('before the action expired') }));
    } finally {
      clock.offsetMs = 0;
    }
    expect(byName(await follow(cancelMe.id))['bulk-sleeper']!.status).toBe('cancelled');
  });

  it('a script runs on the agents of its platforms, one for none of them is refused before it starts; request_update needs no connection', async () => {
    const script = (await call('POST', '/scripts', { name: 'Windows bits', shell: 'powershell', body: 'Get-Date', platforms: ['windows'] })).json() as { id: number };
    const linux = (await call('POST', '/scripts', { name: 'Kernel', shell: 'sh', body: 'echo "$PREFIX $(uname -s)"', parameters: [{ name: 'PREFIX', default: 'k' }], platforms: ['linux'] })).json() as { id: number };
    const ids = live.map((a) => a.id);
    const wrong = await call('POST', '/bulk-actions', { action: 'script', params: { script_id: script.id }, target: { agent_ids: ids }, skip_unsupported: true });
    expectError(wrong, 400, 'VALIDATION_ERROR');
    expect(wrong.json()).toMatchObject({ error: expect.stringMatching(/^Script "Windows bits" runs on windows; none of the 3 agents does: bulk-\d \(linux\)/) });
    const right = await make({ action: 'script', params: { script_id: linux.id, parameters: { PREFIX: 'kernel:' } }, target: { agent_ids: ids } });
    await vi.waitFor(async () => expect((await follow(right.id)).counts.done).toBe(3), { timeout: 15_000 });
    expect((await follow(right.id)).results[0]!.result!.stdout).toBe('kernel: Linux\n');

    const flags = await make({ action: 'request_update', target: { agent_ids: [sleeperId] } });
    expect(flags.results[0]).toMatchObject({ status: 'done' });
    expect(((await call('GET', `/agents/${sleeperId}`)).json() as { update_requested: boolean }).update_requested).toBe(true);
  });

  it('refuses bad requests and keeps a scoped caller to its customer', async () => {
    const before = ((await call('GET', '/bulk-actions?limit=1000')).json() as unknown[]).length;
    expectError(await call('POST', '/bulk-actions', { action: 'exec', params: {}, target: { customer_id: customer } }), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', '/bulk-actions', { action: 'format_disk', target: { customer_id: customer } }), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', '/bulk-actions', { action: 'update_check', target: {} }), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', '/bulk-actions', { action: 'update_check', target: { agent_ids: [live[0]!.id], customer_id: customer } }), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', '/bulk-actions', { action: 'update_check', target: { agent_ids: ['ab'.repeat(16)] } }), 404, 'NOT_FOUND');
    expectError(await call('POST', '/bulk-actions', { action: 'update_check', target: { q: 'no-such-agent' } }), 400, 'VALIDATION_ERROR');
    // Another customer's write key: my agents are not found, my customer matches nothing, my actions are not there.
    const theirs = apiKey(otherWrite);
    expectError(await call('POST', '/bulk-actions', { action: 'exec', params: { command: 'id' }, target: { agent_ids: [live[0]!.id] } }, theirs), 404, 'NOT_FOUND');
    expectError(await call('POST', '/bulk-actions', { action: 'exec', params: { command: 'id' }, target: { customer_id: customer } }, theirs), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', '/bulk-actions', { action: 'exec', params: { command: 'id' }, target: { all: true } }, theirs), 400, 'VALIDATION_ERROR');
    expect((await call('GET', '/bulk-actions', undefined, theirs)).json()).toEqual([]);
    const mine = ((await call('GET', '/bulk-actions?limit=1')).json() as Action[])[0]!;
    expectError(await call('GET', `/bulk-actions/${mine.id}`, undefined, theirs), 404, 'NOT_FOUND');
    expectError(await call('GET', `/bulk-actions/${mine.id}/results.csv`, undefined, theirs), 404, 'NOT_FOUND');
    expect(((await call('GET', '/bulk-actions?limit=1000')).json() as unknown[]).length).toBe(before);
  });
});
