// Configuration backups are a firewall's config.xml (issue 57, item 17): a backup of a hypervisor or a
// Windows machine, taken directly or planned as a task, is refused with 400 before the agent is asked,
// and nothing is stored; a pre-registered agent (platform not known yet) may still get a backup task.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from './helpers/assertions.js';
import { adminToken, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';

let t: LiveServer;
let admin: Record<string, string>;
let hypervisor: LiveAgent;
let firewall: LiveAgent;

beforeAll(async () => {
  t = await startLiveServer();
  admin = bearer(await adminToken(t));
  const key = (await createKey(t.app, admin, 'agent')).key;
  hypervisor = await t.startAgent(key, { hostname: 'pve-01', platform: 'linux' });
  firewall = await t.startAgent(key, { hostname: 'fw-01', platform: 'freebsd' });
});
afterAll(() => t?.close());

const call = (method: 'GET' | 'POST', url: string, payload?: object) => t.app.inject({ method, url: `/api/v1${url}`, headers: admin, ...(payload ? { payload } : {}) });
const stored = async () => Number((await t.db.db.selectFrom('config_backups').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
const taskCount = async () => Number((await t.db.db.selectFrom('tasks').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

describe('configuration backups are for firewalls', () => {
  it('refuses a backup of a hypervisor with 400 naming the platform, and asks the agent nothing', async () => {
    const asked: string[] = [];
    hypervisor.agent.on('command', ({ command }) => asked.push(command));
    const res = await call('POST', `/agents/${hypervisor.id}/backup`);
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(res.json()).toMatchObject({ error: expect.stringContaining('pve-01 is a linux agent'), details: [{ path: 'agent_id' }] });
    expect(asked).toEqual([]);
    expect(await stored()).toBe(0);
  });

  it('refuses a backup task for a hypervisor with 400 on kind, and creates no task', async () => {
    const res = await call('POST', '/tasks', { agent_id: hypervisor.id, kind: 'backup' });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(res.json()).toMatchObject({ error: expect.stringContaining('configuration backups are for firewalls') });
    expect(await taskCount()).toBe(0);
  });

  it('still backs up a firewall, and plans a backup task for a pre-registered agent', async () => {
    expect((await call('POST', `/agents/${firewall.id}/backup`)).statusCode).toBe(201);
    const pending = (await call('POST', '/agents', { name: 'fw-to-come' })).json() as { id: string };
    expect((await call('POST', '/tasks', { agent_id: pending.id, kind: 'backup', run_at: '2099-01-01T00:00:00Z' })).statusCode).toBe(201);
    expect((await call('POST', '/tasks', { agent_id: firewall.id, kind: 'backup', run_at: '2099-01-01T00:00:00Z' })).statusCode).toBe(201);
  });
});
