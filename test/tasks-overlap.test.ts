// A recurring task's next run may start while the last run's webhook is still being retried. The
// scheduler must keep track of both: when the older run's delivery ends, the newer run (still running
// its command) is neither closed as "Interrupted" nor lost. Regression test for runs tracked by task id.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { WEBHOOK_RETRY_DELAYS_MS } from '../src/modules/tasks/webhook-sender.js';
import { FakeClock } from '../src/platform/clock.js';
import { BACKGROUND_LOOPS } from './helpers/app.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';

const clock = new FakeClock('2026-07-01T08:00:30Z');
let s: LiveServer;
let writeKey: string;
let hits = 0;
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    hits++;
    res.writeHead(500).end(); // never delivered: every run's webhook goes through all three tries
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  s = await startLiveServer({ clock, backgroundJobs: true, env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  writeKey = (await createKey(s.app, bearer(await adminToken(s)), 'write')).key;
});
afterAll(async () => {
  await s?.close();
  await new Promise((resolve) => receiver.close(resolve));
});

const call = async (method: 'GET' | 'POST', url: string, payload?: object) =>
  (await s.app.inject({ method, url: `/api/v1${url}`, headers: apiKey(writeKey), ...(payload ? { payload } : {}) })).json() as Record<string, unknown>;
const runsOf = async (id: number) => (await s.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}/runs`, headers: apiKey(writeKey) })).json() as Array<{ id: number; status: string; error: string | null }>;

it('keeps a recurring task\'s newer run while the older run\'s webhook is still retried', async () => {
  const agentKey = (await createKey(s.app, bearer(await adminToken(s)), 'agent')).key;
  const agent = await s.startAgent(agentKey, { name: 'pve-overlap' });
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const task = await call('POST', '/tasks', { agent_id: agent.id, kind: 'exec', params: { command: 'sleep 5' }, cron: '0 4 * * *', webhook_url: url });
  const id = Number(task.id);

  // Run 1 now; its command takes 5 s, then its webhook fails once and waits on the clock to try again.
  await call('POST', `/tasks/${id}/run`);
  await vi.waitFor(() => expect(hits).toBe(1), { timeout: 10_000 });
  expect((await runsOf(id))[0]?.status).toBe('completed');

  // Run 2 starts while run 1's webhook waits.
  await call('POST', `/tasks/${id}/run`);
  await vi.waitFor(async () => expect((await runsOf(id))[0]).toMatchObject({ status: 'running' }));

  // Run 1's delivery ends (tries two and three fail) while run 2's command still runs.
  for (const [index, delay] of WEBHOOK_RETRY_DELAYS_MS.entries()) {
    // The background loops, run 2's command timeout and run 1's backoff wait.
    await vi.waitFor(() => expect(clock.pendingSleepers).toBe(BACKGROUND_LOOPS + 2));
    await clock.advance(delay);
    await vi.waitFor(() => expect(hits).toBe(2 + index));
  }
  // The next scheduler round (it claims a new task, after closing abandoned runs) must leave run 2 alone.
  const probe = Number((await call('POST', '/tasks', { agent_id: agent.id, kind: 'exec', params: { command: 'true' } })).id);
  await vi.waitFor(async () => expect(await runsOf(probe)).toHaveLength(1));
  expect((await runsOf(id))[0]).toMatchObject({ status: 'running', error: null });
  await vi.waitFor(async () => expect((await runsOf(id))[0]?.status).toBe('completed'), { timeout: 10_000 });
  expect((await runsOf(id)).map((r) => r.status)).toEqual(['completed', 'completed']);
}, 30_000);
