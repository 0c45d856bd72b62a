// A bulk script on a target of mixed platforms (issue 57, item 20): before anything starts, the preview
// names the agents the script does not apply to; making the action refuses them (400 naming them)
// unless skip_unsupported, and then it runs on the others only. A group task's runs leave them out.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectError } from './helpers/assertions.js';
import { adminToken, bearer, createCustomer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';

let s: LiveServer;
let admin: Record<string, string>;
let customer: number;
let linuxScript: number;
const ids: Record<string, string> = {};

const call = (method: 'GET' | 'POST', url: string, payload?: object) => s.app.inject({ method, url: `/api/v1${url}`, headers: admin, ...(payload ? { payload } : {}) });

beforeAll(async () => {
  // Background jobs: the task scheduler runs the group task, and the bulk runner its action.
  s = await startLiveServer({ backgroundJobs: true });
  const token = await adminToken(s);
  admin = bearer(token);
  customer = (await createCustomer(s.app, token, 'MX-1', 'Mixed GmbH')).id;
  const key = (await createKey(s.app, admin, 'agent', customer)).key;
  for (const [name, platform] of [['pve-1', 'linux'], ['pve-2', 'linux'], ['win-1', 'windows'], ['fw-1', 'freebsd']] as const) {
    ids[name] = (await s.startAgent(key, { name, hostname: name, platform })).id;
  }
  linuxScript = ((await call('POST', '/scripts', { name: 'Kernel', shell: 'sh', body: 'uname -s', platforms: ['linux'] })).json() as { id: number }).id;
});
afterAll(() => s?.close());

const body = (extra: object = {}) => ({ action: 'script', params: { script_id: linuxScript }, target: { customer_id: customer }, ...extra });

describe('a script on agents of several platforms', () => {
  it('the preview names the agents it does not apply to, and makes nothing', async () => {
    const res = await call('POST', '/bulk-actions/preview', body());
    expect(res.statusCode, res.body).toBe(200);
    const preview = res.json() as { agents: number; platforms: object; applies_to: string[]; unsupported: Array<{ agent_name: string; platform: string }>; unsupported_count: number };
    expect(preview).toMatchObject({ agents: 4, platforms: { linux: 2, windows: 1, freebsd: 1 }, applies_to: ['linux'], script_name: 'Kernel', unsupported_count: 2 });
    expect(preview.unsupported.map((a) => `${a.agent_name}:${a.platform}`).sort()).toEqual(['fw-1:freebsd', 'win-1:windows']);
    expect(((await call('GET', '/bulk-actions')).json() as unknown[]).length).toBe(0);
  });

  it('is refused with 400 naming them, and runs on the others with skip_unsupported', async () => {
    const refused = await call('POST', '/bulk-actions', body());
    expectError(refused, 400, 'VALIDATION_ERROR');
    expect(refused.json()).toMatchObject({ error: expect.stringMatching(/^Script "Kernel" runs on linux; 2 of the 4 agents do not: .*win-1 \(windows\).*skip_unsupported/), details: [{ path: 'target' }] });
    expect(((await call('GET', '/bulk-actions')).json() as unknown[]).length).toBe(0);

    const made = await call('POST', '/bulk-actions', body({ skip_unsupported: true }));
    expect(made.statusCode, made.body).toBe(201);
    const id = (made.json() as { id: number }).id;
    await vi.waitFor(async () => expect(((await call('GET', `/bulk-actions/${id}`)).json() as { counts: { done?: number } }).counts.done).toBe(2), { timeout: 15_000 });
    const results = ((await call('GET', `/bulk-actions/${id}`)).json() as { results: Array<{ agent_name: string; status: string; result: { stdout: string } }> }).results;
    expect(results.map((r) => `${r.agent_name}:${r.status}:${r.result.stdout}`).sort()).toEqual(['pve-1:done:Linux\n', 'pve-2:done:Linux\n']);
  });

  it('a group task runs the script on the agents it applies to', async () => {
    const task = await call('POST', '/tasks', { target: { customer_id: customer }, kind: 'script', params: { script_id: linuxScript }, run_at: '2099-01-01T00:00:00Z' });
    expect(task.statusCode, task.body).toBe(201);
    const taskId = (task.json() as { id: number }).id;
    expect((await call('POST', `/tasks/${taskId}/run`)).statusCode).toBeLessThan(300);
    await vi.waitFor(
      async () => {
        const runs = (await call('GET', `/tasks/${taskId}/runs`)).json() as Array<{ status: string; result: { agents?: Array<{ agent_id: string; status: string }> } }>;
        expect(runs[0]?.status).toBe('completed');
        expect(runs[0]!.result.agents!.map((a) => a.agent_id).sort()).toEqual([ids['pve-1'], ids['pve-2']].sort());
      },
      { timeout: 20_000 },
    );
  });
});
