// Email channels against a real SMTP server (smtp-server, AUTH required, no TLS) whose mail is parsed
// with mailparser: saving verifies the settings with the server (a refusal is 400 CHANNEL_CHECK_FAILED
// with its answer and nothing stored), the test button and deliver() send a mail with the message's
// title as subject to every recipient, a text body listing each item and an HTML alternative; the
// password is never answered, logged or stored in the clear; SMTP hosts on link-local or metadata
// addresses are refused.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelService } from '../src/modules/notifications/channels.service.js';
import type { NotificationItem } from '../src/modules/notifications/notification-message.js';
import { FakeClock } from '../src/platform/clock.js';
import { createLogger } from '../src/platform/logger.js';
import { SecretBox } from '../src/platform/secret-box.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, bearer, createCustomer } from './helpers/identity.js';
import { smtpReceiver, type SmtpReceiver } from './helpers/notification-receivers.js';

const PASSWORD = 'smtp-Pa55word-never-shown';
const USER = 'rmm-mailer';
let t: TestApp;
let smtp: SmtpReceiver;
let admin: Record<string, string>;
let customer: { id: number; number: string; name: string };

beforeAll(async () => {
  smtp = await smtpReceiver({ user: USER, pass: PASSWORD });
  t = await buildTestApp({ captureLogs: true });
  const token = await adminToken(t);
  admin = bearer(token);
  customer = await createCustomer(t.app, token, 'K-1001', 'Müller & Söhne GmbH');
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const emailChannel = (settings: object = {}, secrets: object = { password: PASSWORD }, extra: object = {}) => ({
  type: 'email',
  name: 'On-call mail',
  settings: { host: '127.0.0.1', port: smtp.port, security: 'none', username: USER, from: 'RMM Alerts <rmm@example.com>', to: ['oncall@example.com', 'boss@example.com'], ...settings },
  secrets,
  ...extra,
});

const post = (url: string, payload?: object) => t.app.inject({ method: 'POST', url: `/api/v1${url}`, headers: admin, ...(payload ? { payload } : {}) });
const storedCount = async () => (await t.db.db.selectFrom('notification_channels').select('id').execute()).length;

describe('saving an email channel', () => {
  it('verifies the settings with the SMTP server and answers the password only as "set"', async () => {
    const before = smtp.connections;
    const res = await post('/notification-channels', emailChannel({}, { password: PASSWORD }, { customer_id: customer.id }));
    expect(res.statusCode, res.body).toBe(201);
    expect(smtp.connections).toBeGreaterThan(before); // verify() connected and logged in
    const channel = res.json() as { id: number; settings: object; secrets: object };
    expect(channel.settings).toEqual({ host: '127.0.0.1', port: smtp.port, security: 'none', username: USER, from: 'RMM Alerts <rmm@example.com>', to: ['oncall@example.com', 'boss@example.com'] });
    expect(channel.secrets).toEqual({ password: 'set' });
    const got = await t.app.inject({ method: 'GET', url: `/api/v1/notification-channels/${channel.id}`, headers: admin });
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/notification-channels', headers: admin });
    for (const body of [res.body, got.body, list.body]) expect(body).not.toContain(PASSWORD);
    const row = await t.db.db.selectFrom('notification_channels').selectAll().where('id', '=', channel.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(PASSWORD);
  });

  it("refuses settings the server does not accept: 400 CHANNEL_CHECK_FAILED with its answer, nothing stored", async () => {
    const before = await storedCount();
    const wrong = expectError(await post('/notification-channels', emailChannel({}, { password: 'wrong-password' })), 400, 'CHANNEL_CHECK_FAILED');
    expect(wrong.error).toMatch(/535/);
    const noTls = expectError(await post('/notification-channels', emailChannel({ security: 'starttls' })), 400, 'CHANNEL_CHECK_FAILED');
    expect(noTls.error).toMatch(/STARTTLS/i);
    const closed = expectError(await post('/notification-channels', emailChannel({ port: 9 })), 400, 'CHANNEL_CHECK_FAILED');
    expect(closed.error).toMatch(/ECONNREFUSED/);
    expect(await storedCount()).toBe(before);
    expect(t.logs().join('\n')).not.toContain(PASSWORD);
  });

  it("verifies the server's certificate: smtp-server's built-in one (self-signed, expired) is refused", async () => {
    const tls = await smtpReceiver(undefined, { secure: true });
    try {
      const body = expectError(await post('/notification-channels', emailChannel({ port: tls.port, security: 'tls', username: undefined }, {})), 400, 'CHANNEL_CHECK_FAILED');
      expect(body.error).toMatch(/certificate (has expired|.*self[- ]signed)/);
    } finally {
      await tls.close();
    }
  });

  it('stores a disabled channel without asking the server, and verifies when it is enabled', async () => {
    const res = await post('/notification-channels', emailChannel({ port: 9 }, { password: PASSWORD }, { enabled: false }));
    expect(res.statusCode, res.body).toBe(201);
    const id = (res.json() as { id: number }).id;
    const enable = await t.app.inject({ method: 'PUT', url: `/api/v1/notification-channels/${id}`, headers: admin, payload: { name: 'x', enabled: true, settings: emailChannel({ port: 9 }).settings } });
    expectError(enable, 400, 'CHANNEL_CHECK_FAILED');
    const fixed = await t.app.inject({ method: 'PUT', url: `/api/v1/notification-channels/${id}`, headers: admin, payload: { name: 'x', enabled: true, settings: emailChannel().settings } });
    // The password was bound to the old port: it has to be given again for the new one.
    expect(expectError(fixed, 400, 'VALIDATION_ERROR').details).toEqual([{ path: 'secrets.password', message: 'must be given again when settings.port changes' }]);
    const again = await t.app.inject({ method: 'PUT', url: `/api/v1/notification-channels/${id}`, headers: admin, payload: { ...emailChannel(), enabled: true } });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ enabled: true, secrets: { password: 'set' } });
  });

  it('needs a password with a user name', async () => {
    const body = expectError(await post('/notification-channels', emailChannel({}, {})), 400, 'VALIDATION_ERROR');
    expect(body.details).toEqual([{ path: 'secrets.password', message: 'secrets.password is required when settings.username is set' }]);
  });

  it.each([
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.10.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['metadata.google.internal', 'cloud metadata'],
    ['0.0.0.0', 'unspecified'],
  ])('refuses the SMTP host %s (%s) and stores nothing', async (host, reason) => {
    const before = await storedCount();
    const body = expectError(await post('/notification-channels', emailChannel({ host })), 400, 'VALIDATION_ERROR');
    expect(body.details).toEqual([{ path: 'settings.host', message: expect.stringContaining(`points to a ${reason} address`) }]);
    expect(await storedCount()).toBe(before);
  });
});

describe('sending mail', () => {
  it('sends the test mail to every recipient with the AUTH user, and answers what the server said', async () => {
    const created = await post('/notification-channels', emailChannel({}, { password: PASSWORD }, { customer_id: customer.id }));
    const id = (created.json() as { id: number }).id;
    const mails = smtp.mails.length;
    const res = await post(`/notification-channels/${id}/test`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ delivered: true, status_code: 250, error: null, answer: expect.stringMatching(/^250/) });
    const [got] = smtp.mails.slice(mails);
    expect(got).toBeDefined();
    expect(got!.user).toBe(USER);
    expect(got!.from).toBe('rmm@example.com');
    expect(got!.to.sort()).toEqual(['boss@example.com', 'oncall@example.com']);
    expect(got!.mail.subject).toBe('RMM test notification');
    expect(got!.mail.from?.text).toBe('"RMM Alerts" <rmm@example.com>');
    expect(got!.mail.text).toContain('This is a test message');
    expect(got!.mail.text).toContain('Customer: Müller & Söhne GmbH (K-1001)');
    expect(got!.mail.text).toContain('Agent: Test agent');
    expect(got!.mail.html).toContain('Müller &#38; Söhne GmbH');
    expect(got!.mail.headers.get('x-rmm-delivery')).toMatch(/^[0-9a-f-]{36}$/);
    const status = (await t.app.inject({ method: 'GET', url: `/api/v1/notification-channels/${id}`, headers: admin })).json() as { status: Record<string, unknown> };
    expect(status.status).toMatchObject({ last_error: null, failing_since: null, last_delivered_at: expect.any(String) });
  });

  it('delivers a grouped message: subject by count, every item in the text, HTML escaped', async () => {
    const clock = new FakeClock('2026-03-01T12:00:00Z');
    const service = new ChannelService({ db: t.db.db, box: new SecretBox(randomBytes(32)), clock, logger: createLogger({ level: 'silent' }), allowLoopback: false, webhookSecret: async () => null });
    const caller = { kind: 'user' as const, userId: 1, username: 'admin', role: 'admin' as const, customerIds: null };
    const channel = await service.create(caller, { type: 'email', name: 'Direct', settings: emailChannel().settings, secrets: { password: PASSWORD } });
    const items: NotificationItem[] = [
      item({ event: 'firing', summary: 'disk_used_percent on / is 93.1 (> 90) since 12:00 UTC', agent: { id: 'a1', name: 'fw-<script>', hostname: 'fw1.example' }, link: 'https://rmm.example/agents/a1' }),
      item({ event: 'resolved', summary: 'agent is back online', agent: { id: 'a2', name: 'pve-2', hostname: 'pve2.example' }, customer: null, link: null }),
    ];
    const mails = smtp.mails.length;
    const outcome = await service.deliver(channel.id, { delivery_id: 'delivery-42', test: false, items });
    expect(outcome).toMatchObject({ delivered: true, status_code: 250, error: null });
    const got = smtp.mails[mails]!;
    expect(got.mail.subject).toBe('RMM alerts: 1 firing, 1 resolved');
    const text = got.mail.text ?? '';
    for (const line of [
      '[FIRING] Müller & Söhne GmbH: fw-<script> (fw1.example): disk_used_percent on / is 93.1 (> 90) since 12:00 UTC',
      'Customer: Müller & Söhne GmbH (K-1001)',
      'Agent: fw-<script>',
      'Hostname: fw1.example',
      'What: disk_used_percent on / is 93.1 (> 90) since 12:00 UTC',
      'Since: 2026-03-01 11:55:00 UTC',
      'Link: https://rmm.example/agents/a1',
      '[RESOLVED] pve-2 (pve2.example): agent is back online',
    ]) {
      expect(text).toContain(line);
    }
    expect(got.mail.html).toContain('fw-&#60;script&#62;');
    expect(got.mail.html).not.toContain('<script>');
    expect(got.mail.html).toContain('<a href="https://rmm.example/agents/a1">');
    expect(got.mail.headers.get('x-rmm-delivery')).toBe('delivery-42');
  });

  it('reports a server that went away as not delivered, in the outcome and the status', async () => {
    const gone = await smtpReceiver();
    const res = await post('/notification-channels', emailChannel({ port: gone.port, username: undefined }, {}));
    expect(res.statusCode, res.body).toBe(201);
    const id = (res.json() as { id: number }).id;
    await gone.close();
    const outcome = await post(`/notification-channels/${id}/test`);
    expect(outcome.statusCode).toBe(200);
    expect(outcome.json()).toMatchObject({ delivered: false, status_code: null, error: expect.stringMatching(/^SMTP: .*ECONNREFUSED/) });
    const channel = (await t.app.inject({ method: 'GET', url: `/api/v1/notification-channels/${id}`, headers: admin })).json() as { status: Record<string, unknown> };
    expect(channel.status).toMatchObject({ last_error: expect.stringMatching(/ECONNREFUSED/), failing_since: expect.any(String), last_delivered_at: null });
  });
});

function item(over: Partial<NotificationItem>): NotificationItem {
  return {
    event: 'firing',
    alert_id: 1,
    rule_id: 1,
    rule_name: 'Disk over 90 %',
    kind: 'metric_threshold',
    customer: { id: 1, number: 'K-1001', name: 'Müller & Söhne GmbH' },
    agent: { id: 'a1', name: 'agent', hostname: 'agent.example' },
    label: '/',
    summary: 'summary',
    value: 93.1,
    threshold: 90,
    since: '2026-03-01T11:55:00.000Z',
    at: '2026-03-01T12:00:00.000Z',
    by: null,
    comment: null,
    link: null,
    ...over,
  };
}
