// Issue 61, keeping agents' sets of checks current when nothing announces a change: an agent that did not
// take its set is offered it again a minute later (the revision poll's clock is the server's), a changed
// library script reaches the agents whose checks run it, and check state history older than the metrics'
// retention is deleted by the hourly pass. The agent is a raw socket, so the test decides what it answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneCheckHistory } from '../src/modules/checks/history-retention.js';
import { adminToken, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer, type RawPeer } from './helpers/live-agent.js';
import { ShiftedClock } from './helpers/shifted-clock.js';

type SetParams = { version: string; checks: Array<{ id: string; params: Record<string, unknown> }> };
type Command = { id: string; command: string; params: SetParams };

const clock = new ShiftedClock();
let s: LiveServer;
let admin: string;
let agentId: string;
let peer: RawPeer;

const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: object) =>
  s.app.inject({ method, url: `/api/v1${url}`, headers: bearer(admin), ...(payload ? { payload } : {}) });
const status = async () => (await call('GET', '/checks/status')).json() as { agents_with_sets: number; agents_retrying_sets: number };

/** The next checks_set, answered with success or a refusal. */
async function nextSet(take: boolean): Promise<SetParams> {
  for (;;) {
    const command = (await peer.nextCommand()) as unknown as Command;
    const answer = command.command !== 'checks_set' || take
      ? { success: true, data: command.command === 'checks_set' ? { version: command.params.version } : {} }
      : { success: false, error: 'disk full, cannot keep the set' };
    peer.ws.send(JSON.stringify({ type: 'response', id: command.id, ...answer }));
    if (command.command === 'checks_set') return command.params;
  }
}

beforeAll(async () => {
  s = await startLiveServer({ clock, backgroundJobs: true });
  admin = await adminToken(s);
  const key = (await createKey(s.app, bearer(admin), 'agent')).key;
  agentId = await s.register(key, 'db-01');
  expect((await call('PATCH', `/agents/${agentId}`, { tags: ['db'] })).statusCode).toBe(200);
  peer = await s.openRaw(agentId, key);
  peer.ws.send(JSON.stringify({ type: 'hello', capabilities: ['checks'] }));
  expect((await nextSet(true)).checks).toEqual([]);
});
afterAll(async () => {
  await s?.close();
});

describe('check sets kept current (issue 61)', () => {
  let scriptId: number;
  let checkId: string;

  it('offers a refused set again a minute later, and not before', async () => {
    const script = await call('POST', '/scripts', { name: 'Backup done', shell: 'sh', body: 'echo "OK - backup 1"', platforms: ['linux'] });
    scriptId = (script.json() as { id: number }).id;
    const policy = await call('POST', '/check-policies', { name: 'Databases', tags: ['db'], checks: [{ name: 'Backup', kind: 'script', params: { script_id: scriptId } }] });
    expect(policy.statusCode, policy.body).toBe(201);
    checkId = (policy.json() as { checks: Array<{ id: string }> }).checks[0]!.id;

    const refused = await nextSet(false);
    expect(refused.checks.map((c) => c.id)).toEqual([checkId]);
    // It keeps the set it had (none) meanwhile.
    await expect.poll(status).toMatchObject({ agents_with_sets: 1, agents_retrying_sets: 1 });
    // Two revision polls (5 s apart) pass without a new offer while the minute has not.
    await new Promise((r) => setTimeout(r, 11_000));
    expect(peer.frames.filter((f) => f.type === 'command' && f.command === 'checks_set')).toHaveLength(2);

    clock.offsetMs += 61_000;
    const again = await nextSet(true);
    expect(again.version).toBe(refused.version);
    await expect.poll(status).toMatchObject({ agents_with_sets: 1, agents_retrying_sets: 0 });
  }, 60_000);

  it('brings agents a library script their check runs once it changes', async () => {
    const changed = await call('PUT', `/scripts/${scriptId}`, { name: 'Backup done', shell: 'sh', body: 'echo "OK - backup 2"', platforms: ['linux'] });
    expect(changed.statusCode, changed.body).toBe(200);
    const set = await nextSet(true);
    expect(set.checks[0]!.params).toMatchObject({ script_id: scriptId, script: { shell: 'sh', body: 'echo "OK - backup 2"' } });
  });

  it('deletes state history older than the metrics retention', async () => {
    const version = (await call('GET', `/agents/${agentId}/checks`)).json().version as string;
    peer.ws.send(JSON.stringify({ type: 'check_results', version, results: [{ check_id: checkId, state: 2, output: 'CRITICAL - no backup', duration_ms: 4, perfdata: [], ran_at: new Date().toISOString() }] }));
    const history = async () => ((await call('GET', `/agents/${agentId}/checks/${checkId}/history`)).json() as unknown[]).length;
    await expect.poll(history).toBe(1);
    expect(await pruneCheckHistory(s.db.db, s.config.metricsRetentionDays, new Date())).toBe(0);
    expect(await history()).toBe(1);
    const later = new Date(Date.now() + (s.config.metricsRetentionDays + 1) * 86_400_000);
    expect(await pruneCheckHistory(s.db.db, s.config.metricsRetentionDays, later)).toBe(1);
    expect(await history()).toBe(0);
    // The check's latest state stays: only its past goes.
    expect((await call('GET', `/agents/${agentId}/checks`)).json()).toMatchObject({ checks: [{ id: checkId, state: 'critical' }] });
  });
});
