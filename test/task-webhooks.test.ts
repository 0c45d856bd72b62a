// Task webhooks (contract §10) against real HTTP receivers on 127.0.0.1: the body arrives byte for byte
// with an HMAC signature the receiver can recompute, failures are tried three times with backoff (on a
// FakeClock), timeouts and redirects count as failures, and targets on loopback, link-local or metadata
// addresses are refused when saved and again at send time, after DNS resolution.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { checkWebhookUrl, type LookupFn } from '../src/modules/tasks/webhook-target.js';
import { WebhookSender, type WebhookDelivery, type WebhookSenderOptions } from '../src/modules/tasks/webhook-sender.js';
import { FakeClock } from '../src/platform/clock.js';
import { AppError } from '../src/platform/errors.js';
import { createLogger } from '../src/platform/logger.js';

const SECRET = 'whsec-task-hooks-0123456789';
const PAYLOAD = {
  event: 'task.finished',
  task_id: 't-1',
  run_id: 'r-1',
  name: 'Wöchentliches Update ✓',
  kind: 'update',
  agent_id: 'a-1',
  customer_number: 'K-1001',
  status: 'completed',
  result: { exit_code: 0, health_check: { agent_online: true, checked_at: '2026-01-01T00:05:00.000Z' } },
  started_at: '2026-01-01T00:00:00.000Z',
  finished_at: '2026-01-01T00:05:00.000Z',
};

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver; `answer` gets the 0-based request number and replies (or never does). */
async function receiver(answer: (index: number, res: http.ServerResponse) => void) {
  const requests: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      answer(requests.length - 1, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  servers.push(server);
  return { requests, port, url: `http://127.0.0.1:${port}/hook/tok-path-secret` };
}
const servers: http.Server[] = [];
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const status = (code: number, headers: Record<string, string> = {}) => (_: number, res: http.ServerResponse) => res.writeHead(code, headers).end('ok');

const logLines: string[] = [];
const logger = createLogger({
  level: 'debug',
  destination: new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  }),
});

function sender(clock: FakeClock, options: Partial<WebhookSenderOptions> = {}): WebhookSender {
  return new WebhookSender({ clock, allowLoopback: true, secret: async () => SECRET, logger, ...options });
}

/** Runs a delivery to its end, moving the fake clock past each backoff wait as it comes. */
async function runToEnd(clock: FakeClock, delivery: Promise<WebhookDelivery>): Promise<WebhookDelivery> {
  let done = false;
  void delivery.then(() => (done = true), () => (done = true));
  while (!done) {
    if (clock.pendingSleepers > 0) await clock.advance(60_000);
    else await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return delivery;
}

const sign = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(Buffer.from(body, 'utf8')).digest('hex')}`;

describe('delivering a webhook', () => {
  it('POSTs the payload byte for byte with a signature the receiver can recompute', async () => {
    const r = await receiver(status(204));
    const clock = new FakeClock();
    const delivery = await sender(clock).deliver(r.url, PAYLOAD);

    expect(delivery).toEqual({ url: r.url, attempts: 1, delivered: true, status_code: 204, error: null, last_attempt_at: clock.now().toISOString() });
    expect(r.requests).toHaveLength(1);
    const [got] = r.requests;
    expect(got!.body).toBe(JSON.stringify(PAYLOAD));
    expect(JSON.parse(got!.body)).toEqual(PAYLOAD);
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['user-agent']).toBe('rmm-backend-webhook');
    expect(got!.headers['x-rmm-delivery']).toMatch(/^[0-9a-f-]{36}$/);
    expect(got!.headers['x-rmm-signature']).toBe(sign(SECRET, got!.body));
    expect(got!.headers['x-rmm-signature']).not.toBe(sign(`${SECRET}x`, got!.body));
    expect(JSON.stringify(delivery)).not.toContain(SECRET);
  });

  it('sends no signature header when no webhook secret is set', async () => {
    const r = await receiver(status(200));
    const delivery = await sender(new FakeClock(), { secret: async () => null }).deliver(r.url, PAYLOAD);
    expect(delivery.delivered).toBe(true);
    expect(r.requests[0]!.headers).not.toHaveProperty('x-rmm-signature');
  });

  it('tries again after 1 s and 5 s: 500, 500, then 200 makes exactly three requests with one delivery id', async () => {
    const r = await receiver((i, res) => status(i < 2 ? 500 : 200)(i, res));
    const clock = new FakeClock();
    const pending = sender(clock).deliver(r.url, PAYLOAD);

    await vi.waitFor(() => expect(clock.pendingSleepers).toBe(1));
    expect(r.requests).toHaveLength(1);
    await clock.advance(999);
    expect(r.requests).toHaveLength(1);
    await clock.advance(1);
    await vi.waitFor(() => expect(clock.pendingSleepers).toBe(1));
    expect(r.requests).toHaveLength(2);
    await clock.advance(4_999);
    expect(r.requests).toHaveLength(2);
    await clock.advance(1);

    const delivery = await pending;
    expect(delivery).toMatchObject({ attempts: 3, delivered: true, status_code: 200, error: null, last_attempt_at: '2026-01-01T00:00:06.000Z' });
    expect(r.requests).toHaveLength(3);
    expect(new Set(r.requests.map((q) => q.headers['x-rmm-delivery'])).size).toBe(1);
    expect(new Set(r.requests.map((q) => q.headers['x-rmm-signature'])).size).toBe(1);
  });

  it('gives up after three tries of 500, without logging the secret or the URL path', async () => {
    const r = await receiver(status(500));
    const clock = new FakeClock();
    const delivery = await runToEnd(clock, sender(clock).deliver(r.url, PAYLOAD));
    expect(delivery).toMatchObject({ attempts: 3, delivered: false, status_code: 500, error: 'receiver answered HTTP 500' });
    expect(r.requests).toHaveLength(3);
    expect(logLines.join('')).toContain('webhook try failed');
    expect(logLines.join('')).not.toContain(SECRET);
    expect(logLines.join('')).not.toContain('tok-path-secret');
  });

  it('counts a receiver that never answers as a timeout and tries again', async () => {
    const r = await receiver(() => undefined);
    const clock = new FakeClock();
    const delivery = await runToEnd(clock, sender(clock, { timeoutMs: 150 }).deliver(r.url, PAYLOAD));
    expect(delivery).toMatchObject({ attempts: 3, delivered: false, status_code: null, error: 'no answer within 150 ms' });
    expect(r.requests).toHaveLength(3);
  });

  it('does not follow a redirect and counts it as a failure', async () => {
    const elsewhere = await receiver(status(200));
    const r = await receiver(status(302, { location: elsewhere.url }));
    const clock = new FakeClock();
    const delivery = await runToEnd(clock, sender(clock).deliver(r.url, PAYLOAD));
    expect(delivery).toMatchObject({ attempts: 3, delivered: false, status_code: 302 });
    expect(delivery.error).toMatch(/302.*redirects are not followed/);
    expect(r.requests).toHaveLength(3);
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('counts a refused connection as a failed try', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const clock = new FakeClock();
    const delivery = await runToEnd(clock, sender(clock).deliver(`http://127.0.0.1:${port}/`, PAYLOAD));
    expect(delivery).toMatchObject({ attempts: 3, delivered: false, status_code: null });
    expect(delivery.error).toMatch(/ECONNREFUSED/);
  });

  it('connects to the address that was checked and keeps the URL host name in the Host header', async () => {
    const r = await receiver(status(200));
    const lookup: LookupFn = async (name) => (name === 'hooks.example.test' ? [{ address: '127.0.0.1', family: 4 }] : []);
    const delivery = await sender(new FakeClock(), { lookup }).deliver(`http://hooks.example.test:${r.port}/hook`, PAYLOAD);
    expect(delivery.delivered).toBe(true);
    expect(r.requests[0]!.headers.host).toBe(`hooks.example.test:${r.port}`);
  });

  it('refuses at send time a name that resolved to an allowed address when saved but now points to metadata, with no request', async () => {
    const r = await receiver(status(200));
    const answers = [[{ address: '127.0.0.1', family: 4 }], [{ address: '169.254.169.254', family: 4 }]];
    const lookup: LookupFn = async () => answers.shift() ?? [];
    const url = `http://rebind.example.test:${r.port}/hook`;
    await expect(checkWebhookUrl(url, { allowLoopback: true, lookup })).resolves.toBeInstanceOf(URL);

    const delivery = await sender(new FakeClock(), { lookup }).deliver(url, PAYLOAD);
    expect(delivery).toMatchObject({ attempts: 0, delivered: false, status_code: null });
    expect(delivery.error).toMatch(/cloud metadata address: rebind\.example\.test \(169\.254\.169\.254\)/);
    expect(r.requests).toHaveLength(0);
  });
});

describe('checking a webhook URL', () => {
  /** The validation error's message, or null when the URL passes. */
  async function refusal(url: string, allowLoopback = false, lookup?: LookupFn): Promise<string | null> {
    try {
      await checkWebhookUrl(url, { allowLoopback, lookup });
      return null;
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      const appError = err as AppError;
      expect(appError.code).toBe('VALIDATION_ERROR');
      expect(appError.details).toEqual([{ path: 'webhook_url', message: appError.message }]);
      return appError.message;
    }
  }

  it.each([
    ['http://127.0.0.1/', /loopback address: 127\.0\.0\.1/],
    ['http://localhost/', /loopback/],
    ['http://LOCALHOST./', /loopback/],
    ['http://[::1]/', /loopback/],
    ['http://[::ffff:127.0.0.1]/', /loopback/],
    ['http://2130706433/', /loopback address: 127\.0\.0\.1/],
    ['http://0x7f.0.0.1/', /loopback address: 127\.0\.0\.1/],
    ['http://0x7f.1/', /loopback/],
    ['http://0177.0.0.1/', /loopback/],
    ['http://0.0.0.0/', /unspecified/],
    ['http://0/', /unspecified/],
    ['http://[::]/', /unspecified/],
    ['http://169.254.169.254/latest/meta-data/', /cloud metadata/],
    ['http://[::ffff:169.254.169.254]/', /cloud metadata/],
    ['http://[fd00:ec2::254]/', /cloud metadata/],
    ['http://100.100.100.200/', /cloud metadata/],
    ['http://metadata.google.internal/', /cloud metadata/],
    ['http://metadata/', /cloud metadata/],
    ['http://169.254.10.1/', /link-local/],
    ['http://[fe80::1]/', /link-local/],
    ['ftp://x/', /http or https, not ftp/],
    ['http://user:pw@example.com/', /user name or password/],
    ['not a url', /not a valid URL/],
  ])('refuses %s', async (url, reason) => {
    expect(await refusal(url)).toMatch(reason);
  });

  it('allows public and private addresses (MSPs run internal receivers)', async () => {
    for (const url of ['https://93.184.216.34/hook', 'http://10.0.0.5:8080/', 'http://172.16.3.4/', 'http://192.168.1.10/', 'http://100.64.1.2/', 'http://[fd12:3456::1]/', 'http://[2001:db8::1]/']) {
      expect(await refusal(url), url).toBeNull();
    }
  });

  it('with allowLoopback lets loopback through, and nothing else', async () => {
    expect(await refusal('http://127.0.0.1:8080/', true)).toBeNull();
    expect(await refusal('http://[::1]/', true)).toBeNull();
    expect(await refusal('http://localhost/', true, async () => [{ address: '127.0.0.1', family: 4 }])).toBeNull();
    expect(await refusal('http://169.254.169.254/', true)).toMatch(/cloud metadata/);
    expect(await refusal('http://[fe80::1]/', true)).toMatch(/link-local/);
    expect(await refusal('http://0.0.0.0/', true)).toMatch(/unspecified/);
  });

  it('refuses a host name when any address it resolves to is forbidden', async () => {
    const resolvesTo = (...addresses: string[]): LookupFn => async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    expect(await refusal('http://hooks.example.test/', false, resolvesTo('127.0.0.1'))).toMatch(/loopback address: hooks\.example\.test \(127\.0\.0\.1\)/);
    expect(await refusal('http://hooks.example.test/', false, resolvesTo('93.184.216.34', '::ffff:7f00:1'))).toMatch(/loopback/);
    expect(await refusal('http://hooks.example.test/', false, resolvesTo('fe80::1%eth0'))).toMatch(/link-local/);
    expect(await refusal('http://hooks.example.test/', false, resolvesTo('93.184.216.34', '2001:db8::1'))).toBeNull();
    const notFound: LookupFn = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    expect(await refusal('http://nowhere.example.test/', false, notFound)).toMatch(/does not resolve \(ENOTFOUND\)/);
  });
});
