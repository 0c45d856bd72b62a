// Webhook channels and the HTTP delivery every chat channel shares, against a real receiver on
// 127.0.0.1 (WEBHOOK_ALLOW_LOOPBACK): the JSON body with its HMAC signature over the exact bytes (the
// channel's secret, else the settings' webhook_secret) and delivery id; failures answered 200 by the
// test route with the receiver's status and answer and kept in the channel's status until a delivery;
// disabled and deleted channels; the SSRF check again at send time, on the address that was checked;
// timeouts; and logs that name origins only.
import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LookupFn } from '../src/modules/tasks/webhook-target.js';
import { ChannelService, type ChannelServiceDeps } from '../src/modules/notifications/channels.service.js';
import { FakeClock } from '../src/platform/clock.js';
import { createLogger } from '../src/platform/logger.js';
import { SecretBox } from '../src/platform/secret-box.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, bearer } from './helpers/identity.js';
import { answerWith, httpReceiver, type HttpReceiver } from './helpers/notification-receivers.js';

const SECRET = 'whsec-own-channel-secret-0123';
const SETTINGS_SECRET = 'whsec-settings-secret-456789';
const sign = (key: string, body: string) => `sha256=${createHmac('sha256', key).update(Buffer.from(body, 'utf8')).digest('hex')}`;

let t: TestApp;
let admin: Record<string, string>;
const receivers: HttpReceiver[] = [];
const caller = { kind: 'user' as const, userId: 1, username: 'admin', role: 'admin' as const, customerIds: null };

beforeAll(async () => {
  t = await buildTestApp({ env: { WEBHOOK_ALLOW_LOOPBACK: 'true' }, captureLogs: true });
  admin = bearer(await adminToken(t));
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await t?.close();
});

async function receiver(...args: Parameters<typeof httpReceiver>) {
  const r = await httpReceiver(...args);
  receivers.push(r);
  return r;
}

const api = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => t.app.inject({ method, url: `/api/v1${url}`, headers: admin, ...(payload ? { payload } : {}) });

async function createChannel(payload: object): Promise<number> {
  const res = await api('POST', '/notification-channels', payload);
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { id: number }).id;
}

function directService(over: Partial<ChannelServiceDeps> = {}): ChannelService {
  const logger = createLogger({ level: 'silent' });
  return new ChannelService({ db: t.db.db, box: new SecretBox(randomBytes(32)), clock: new FakeClock(), logger, allowLoopback: true, webhookSecret: async () => null, ...over });
}

const message = (deliveryId = 'd-1') => ({
  delivery_id: deliveryId,
  test: false,
  items: [
    {
      event: 'firing' as const,
      alert_id: 7,
      rule_id: 3,
      rule_name: 'Agent offline for 5 minutes',
      kind: 'agent_offline',
      customer: null,
      agent: { id: 'a-1', name: 'fw-1', hostname: 'fw-1.example' },
      label: '',
      summary: 'offline for 6 minutes',
      value: null,
      threshold: 5,
      since: '2026-01-01T00:00:00.000Z',
      at: '2026-01-01T00:06:00.000Z',
      by: null,
      comment: null,
      link: 'https://rmm.example/agents/a-1',
    },
  ],
});

describe('webhook channels', () => {
  it('POSTs {event, delivery_id, test, alerts} signed with the channel secret over the exact body', async () => {
    const r = await receiver();
    const id = await createChannel({ type: 'webhook', name: 'Hook', settings: { url: r.url('/hook?x=1') }, secrets: { secret: SECRET } });
    const res = await api('POST', `/notification-channels/${id}/test`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ delivered: true, status_code: 200, error: null, answer: 'ok' });
    const [got] = r.requests;
    expect(got!.method).toBe('POST');
    expect(got!.path).toBe('/hook?x=1');
    expect(got!.headers['content-type']).toBe('application/json');
    const body = JSON.parse(got!.body) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['event', 'delivery_id', 'test', 'alerts']);
    expect(body).toMatchObject({ event: 'alert.notification', test: true, alerts: [{ event: 'firing', kind: 'test', agent: { id: 'test', name: 'Test agent', hostname: 'test.example' }, link: null }] });
    expect(got!.headers['x-rmm-delivery']).toBe(body.delivery_id);
    expect(got!.headers['x-rmm-signature']).toBe(sign(SECRET, got!.body));
    expect(got!.headers['x-rmm-signature']).not.toBe(sign(SETTINGS_SECRET, got!.body));
  });

  it("signs with the settings' webhook_secret when the channel has none, and not at all without either", async () => {
    const r = await receiver();
    const id = await createChannel({ type: 'webhook', name: 'Hook 2', settings: { url: r.url('/h2') } });
    await api('POST', `/notification-channels/${id}/test`);
    expect(r.requests[0]!.headers).not.toHaveProperty('x-rmm-signature');
    expect((await api('PUT', '/settings', { webhook_secret: SETTINGS_SECRET })).statusCode).toBe(200);
    await api('POST', `/notification-channels/${id}/test`);
    expect(r.requests[1]!.headers['x-rmm-signature']).toBe(sign(SETTINGS_SECRET, r.requests[1]!.body));
  });

  it('answers a failed test with 200 and the receiver status and answer; the status keeps the failure until a delivery', async () => {
    let status = 500;
    const r = await receiver((_req, res) => res.writeHead(status).end(status === 500 ? 'boom: database down' : 'fine'));
    const id = await createChannel({ type: 'webhook', name: 'Flaky', settings: { url: r.url('/f') } });
    const failed = await api('POST', `/notification-channels/${id}/test`);
    expect(failed.statusCode).toBe(200);
    expect(failed.json()).toEqual({ delivered: false, status_code: 500, error: 'receiver answered HTTP 500', answer: 'boom: database down' });
    const after = (await api('GET', `/notification-channels/${id}`)).json() as { status: Record<string, unknown> };
    expect(after.status).toMatchObject({ last_error: 'receiver answered HTTP 500', last_delivered_at: null, failing_since: expect.any(String), last_attempt_at: expect.any(String) });
    status = 204;
    expect((await api('POST', `/notification-channels/${id}/test`)).json()).toMatchObject({ delivered: true, status_code: 204 });
    const healed = (await api('GET', `/notification-channels/${id}`)).json() as { status: Record<string, unknown> };
    expect(healed.status).toMatchObject({ last_error: null, failing_since: null, last_delivered_at: expect.any(String) });
  });

  it('does not follow redirects', async () => {
    const target = await receiver();
    const r = await receiver(answerWith(302, '', { location: target.url('/elsewhere') }));
    const id = await createChannel({ type: 'webhook', name: 'Redirect', settings: { url: r.url('/r') } });
    expect((await api('POST', `/notification-channels/${id}/test`)).json()).toMatchObject({ delivered: false, status_code: 302, error: 'receiver answered HTTP 302 (redirects are not followed)' });
    expect(target.requests).toEqual([]);
  });
});

describe('deliver()', () => {
  it('sends nothing to a disabled or deleted channel and says why', async () => {
    const r = await receiver();
    const service = directService();
    const channel = await service.create(caller, { type: 'webhook', name: 'Off', enabled: false, settings: { url: r.url('/off') } });
    expect(await service.deliver(channel.id, message())).toEqual({ delivered: false, status_code: null, error: `notification channel ${channel.id} is disabled`, answer: null });
    await service.delete(caller, channel.id);
    expect(await service.deliver(channel.id, message())).toMatchObject({ delivered: false, error: `notification channel ${channel.id} does not exist (deleted)` });
    expect(r.requests).toEqual([]);
  });

  it('connects to the address the check resolved, with the URL host in the Host header', async () => {
    const r = await receiver();
    const lookup: LookupFn = async (host) => (host === 'hooks.example' ? [{ address: '127.0.0.1', family: 4 }] : []);
    const service = directService({ lookup });
    const channel = await service.create(caller, { type: 'webhook', name: 'Named', settings: { url: `http://hooks.example:${r.port}/named` } });
    expect(await service.deliver(channel.id, message('d-named'))).toMatchObject({ delivered: true });
    expect(r.requests[0]!.headers.host).toBe(`hooks.example:${r.port}`);
    expect(JSON.parse(r.requests[0]!.body)).toMatchObject({ delivery_id: 'd-named', test: false, alerts: [{ alert_id: 7, summary: 'offline for 6 minutes' }] });
  });

  it('checks the name again at send time: re-pointed at the metadata address, nothing is sent', async () => {
    let answer = '192.0.2.10';
    const service = directService({ allowLoopback: false, lookup: async () => [{ address: answer, family: 4 }] });
    const channel = await service.create(caller, { type: 'webhook', name: 'Rebind', settings: { url: 'http://rebind.example/hook' } });
    answer = '169.254.169.254';
    expect(await service.deliver(channel.id, message())).toEqual({
      delivered: false,
      status_code: null,
      error: 'the channel URL points to a cloud metadata address: rebind.example (169.254.169.254)',
      answer: null,
    });
  });

  it('gives up a try after the timeout', async () => {
    const r = await receiver(() => undefined); // never answers
    const service = directService({ timeoutMs: 300 });
    const channel = await service.create(caller, { type: 'webhook', name: 'Slow', settings: { url: r.url('/slow') } });
    expect(await service.deliver(channel.id, message())).toMatchObject({ delivered: false, status_code: null, error: 'no answer within 300 ms' });
  });

  it('logs the origin of a failing receiver, never the token in its path', async () => {
    const r = await receiver(answerWith(401, '{"ok":false,"description":"Unauthorized"}'));
    const token = `123456789:${'S3cretBotToken_'.repeat(2)}`;
    const id = await createChannel({ type: 'telegram', name: 'Bot', settings: { chat_id: '-100200300', api_url: r.url('/') }, secrets: { bot_token: token } });
    const outcome = (await api('POST', `/notification-channels/${id}/test`)).json() as { error: string; answer: string };
    expect(outcome).toMatchObject({ delivered: false, status_code: 401, answer: '{"ok":false,"description":"Unauthorized"}' });
    expect(r.requests[0]!.path).toBe(`/bot${token}/sendMessage`);
    const logs = t.logs().join('\n');
    expect(logs).toContain(`"channel":"http://127.0.0.1:${r.port}"`);
    expect(logs).not.toContain(token);
    expect(JSON.stringify(outcome)).not.toContain(token);
  });
});
