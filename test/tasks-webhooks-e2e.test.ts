// Task webhooks end to end (contract §10, issue 11 acceptance 3): the real server runs an exec task on
// the reference agent of a customer and POSTs `task.finished` to a receiver this test listens with,
// signed with the settings' webhook_secret; a receiver that fails twice gets exactly three tries and the
// run records the delivery; forbidden targets are refused on save. The backoff waits run on the
// server's FakeClock, so the test moves time instead of sleeping.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WEBHOOK_RETRY_DELAYS_MS } from '../src/modules/tasks/webhook-sender.js';
import { FakeClock } from '../src/platform/clock.js';
import { BACKGROUND_LOOPS, buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';

const SECRET = 'whsec-e2e-7f3a9c21d4b8e605';

interface TaskDto {
  id: number;
  name: string;
  kind: string;
  agent_id: string;
}
interface RunDto {
  id: number;
  status: string;
  started_at: string;
  finished_at: string | null;
  result: Record<string, unknown> | null;
  webhook: Record<string, unknown> | null;
}
interface Received {
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

const receivers: http.Server[] = [];
/** A webhook receiver on 127.0.0.1 answering the n-th request (0-based) with `statusFor(n)`. */
async function receiver(statusFor: (index: number) => number) {
  const requests: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(statusFor(requests.length - 1)).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receivers.push(server);
  return { requests, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/rmm` };
}

/** What a receiver does: recompute the HMAC over the exact bytes received and compare in constant time. */
function signatureValid(received: Received, secret: string): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(received.body).digest('hex')}`);
  const given = Buffer.from(String(received.headers['x-rmm-signature'] ?? ''));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const clock = new FakeClock('2026-08-03T07:00:00Z');
let s: LiveServer;
let writeKey: string;
let customer: { id: number; number: string };
let agent: LiveAgent;

const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, headers: Record<string, string> = apiKey(writeKey), app = s.app) => {
  const res = await app.inject({ method, url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.json() as unknown };
};
const runs = async (id: number) => (await call('GET', `/tasks/${id}/runs`)).body as RunDto[];
/** The task's only run once its webhook outcome has been stored (the last step of a run). */
async function settledRun(id: number): Promise<RunDto> {
  await vi.waitFor(async () => expect((await runs(id))[0]?.webhook).toBeTruthy(), { timeout: 10_000 });
  const all = await runs(id);
  expect(all).toHaveLength(1);
  return all[0]!;
}

beforeAll(async () => {
  s = await startLiveServer({ clock, backgroundJobs: true, env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  const token = await adminToken(s);
  customer = await createCustomer(s.app, token, 'K-4711');
  writeKey = (await createKey(s.app, bearer(token), 'write')).key;
  const agentKey = (await createKey(s.app, bearer(token), 'agent', customer.id)).key;
  agent = await s.startAgent(agentKey, { name: 'fw-hooks' });
  const settings = await call('PUT', '/settings', { webhook_secret: SECRET }, bearer(token));
  expect(settings.status).toBe(200);
  expect(JSON.stringify(settings.body)).not.toContain(SECRET);
});
afterAll(async () => {
  await s?.close();
  for (const server of receivers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('task.finished webhooks from a real server', () => {
  it('the agent joined the customer it was keyed to', async () => {
    const seen = (await call('GET', `/agents/${agent.id}`)).body as { customer_id: number | null };
    expect(seen.customer_id).toBe(customer.id);
  });

  it('POSTs the run to the receiver, signed with the webhook secret over the exact body', async () => {
    const r = await receiver(() => 200);
    const created = await call('POST', '/tasks', { agent_id: agent.id, kind: 'exec', name: 'Nightly check ✓', params: { command: 'echo hooked' }, webhook_url: r.url });
    expect(created.status).toBe(201);
    const task = created.body as TaskDto;

    const run = await settledRun(task.id);
    expect(r.requests).toHaveLength(1);
    const [got] = r.requests;
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['x-rmm-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(signatureValid(got!, SECRET)).toBe(true);
    expect(signatureValid(got!, `${SECRET}x`)).toBe(false);

    expect(JSON.parse(got!.body.toString('utf8'))).toEqual({
      event: 'task.finished',
      task_id: task.id,
      run_id: run.id,
      name: 'Nightly check ✓',
      kind: 'exec',
      agent_id: agent.id,
      customer_number: customer.number,
      status: 'completed',
      result: run.result,
      started_at: run.started_at,
      finished_at: run.finished_at,
    });
    expect(run.result).toMatchObject({ exit_code: 0, stdout: 'hooked\n' });
    expect(run.webhook).toMatchObject({ url: r.url, delivered: true, attempts: 1, status_code: 200, error: null });
  });

  it('tries a receiver that fails twice (500) a third time, and the run records delivered after 3 attempts', async () => {
    const r = await receiver((i) => (i < 2 ? 500 : 200));
    const created = await call('POST', '/tasks', { agent_id: agent.id, kind: 'exec', params: { command: 'true' }, webhook_url: r.url });
    const task = created.body as TaskDto;

    for (const [tries, delay] of WEBHOOK_RETRY_DELAYS_MS.entries()) {
      await vi.waitFor(() => expect(r.requests).toHaveLength(tries + 1), { timeout: 10_000 });
      // The sender's backoff sleep joins the server's own loops on the clock; only then move it.
      await vi.waitFor(() => expect(clock.pendingSleepers).toBeGreaterThanOrEqual(BACKGROUND_LOOPS + 1));
      await clock.advance(delay);
    }

    const run = await settledRun(task.id);
    expect(r.requests).toHaveLength(3);
    expect(run.status).toBe('completed');
    expect(run.webhook).toMatchObject({ url: r.url, delivered: true, attempts: 3, status_code: 200, error: null });
    // One delivery, tried three times: the same id and the same signed bytes each time.
    expect(new Set(r.requests.map((q) => q.headers['x-rmm-delivery'])).size).toBe(1);
    expect(new Set(r.requests.map((q) => q.body.toString('hex'))).size).toBe(1);
    expect(r.requests.every((q) => signatureValid(q, SECRET))).toBe(true);
  });

  it('refuses a metadata address even with WEBHOOK_ALLOW_LOOPBACK', async () => {
    const before = ((await call('GET', '/tasks?limit=1000')).body as TaskDto[]).length;
    for (const url of ['http://169.254.169.254/', 'http://169.254.169.254/latest/meta-data/']) {
      const res = await call('POST', '/tasks', { agent_id: agent.id, kind: 'reboot', webhook_url: url });
      expect(res.status, url).toBe(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [expect.objectContaining({ path: 'webhook_url', message: expect.stringMatching(/cloud metadata/) })] });
    }
    expect((await call('GET', '/tasks?limit=1000')).body).toHaveLength(before);
  });
});

describe('a server without WEBHOOK_ALLOW_LOOPBACK', () => {
  let plain: TestApp;
  let plainKey: string;
  let plainAgent: string;
  beforeAll(async () => {
    plain = await buildTestApp();
    const admin = bearer(await adminToken(plain));
    plainKey = (await createKey(plain.app, admin, 'write')).key;
    const agentKey = (await createKey(plain.app, admin, 'agent')).key;
    const registered = await call('POST', '/agent/register', { hostname: 'fw-plain', platform: 'linux' }, apiKey(agentKey), plain.app);
    expect(registered.status).toBe(200);
    plainAgent = (registered.body as { agent_id: string }).agent_id;
  });
  afterAll(() => plain?.close());

  it.each([
    ['http://127.0.0.1/', /loopback/],
    ['http://localhost:8080/hook', /loopback/],
    ['http://169.254.169.254/', /cloud metadata/],
  ])('refuses %s with 400 and creates no task', async (url, reason) => {
    const res = await call('POST', '/tasks', { agent_id: plainAgent, kind: 'reboot', webhook_url: url }, apiKey(plainKey), plain.app);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [expect.objectContaining({ path: 'webhook_url', message: expect.stringMatching(reason) })] });
    expect((await call('GET', '/tasks', undefined, apiKey(plainKey), plain.app)).body).toEqual([]);
  });
});
