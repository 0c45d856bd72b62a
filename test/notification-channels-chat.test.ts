// The chat channels' payloads as their receivers get them, over real HTTP on 127.0.0.1: ntfy's JSON
// publish with a Bearer token, a Teams Workflows message with an Adaptive Card, Slack's {text, blocks}
// with agent text escaped, Discord's embeds within Discord's limits and with mentions off, and
// Telegram's sendMessage on the bot's path. Each is sent through the real API (test button) and, for
// grouped messages, through ChannelService.deliver() on the same database.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelService } from '../src/modules/notifications/channels.service.js';
import type { NotificationItem, NotificationMessage } from '../src/modules/notifications/notification-message.js';
import { FakeClock } from '../src/platform/clock.js';
import { createLogger } from '../src/platform/logger.js';
import { SecretBox } from '../src/platform/secret-box.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, bearer } from './helpers/identity.js';
import { httpReceiver, type HttpReceiver } from './helpers/notification-receivers.js';

let t: TestApp;
let admin: Record<string, string>;
let r: HttpReceiver;
let service: ChannelService;
const caller = { kind: 'user' as const, userId: 1, username: 'admin', role: 'admin' as const, customerIds: null };

beforeAll(async () => {
  t = await buildTestApp({ env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  admin = bearer(await adminToken(t));
  r = await httpReceiver();
  service = new ChannelService({ db: t.db.db, box: new SecretBox(randomBytes(32)), clock: new FakeClock(), logger: createLogger({ level: 'silent' }), allowLoopback: true, webhookSecret: async () => null });
});
afterAll(async () => {
  await r?.close();
  await t?.close();
});

/** Sends the test message through the API; returns the request the receiver got, body parsed. */
async function testSend(payload: object) {
  const created = await t.app.inject({ method: 'POST', url: '/api/v1/notification-channels', headers: admin, payload });
  expect(created.statusCode, created.body).toBe(201);
  const before = r.requests.length;
  const res = await t.app.inject({ method: 'POST', url: `/api/v1/notification-channels/${(created.json() as { id: number }).id}/test`, headers: admin });
  expect(res.json()).toMatchObject({ delivered: true, status_code: 200 });
  const got = r.requests[before]!;
  return { ...got, json: JSON.parse(got.body) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any -- receiver payloads
}

async function deliverTo(payload: Parameters<ChannelService['create']>[1], message: NotificationMessage) {
  const channel = await service.create(caller, payload);
  const before = r.requests.length;
  expect(await service.deliver(channel.id, message)).toMatchObject({ delivered: true });
  return JSON.parse(r.requests[before]!.body) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- receiver payloads
}

function item(n: number, over: Partial<NotificationItem> = {}): NotificationItem {
  return {
    event: 'firing',
    alert_id: n,
    rule_id: 1,
    rule_name: 'Disk over 90 %',
    kind: 'metric_threshold',
    customer: { id: 1, number: 'K-1', name: 'Acme' },
    agent: { id: `a${n}`, name: `agent-${n}`, hostname: `host-${n}.example` },
    label: '/',
    summary: `disk_used_percent on / is 9${n % 10}.0 (> 90)`,
    value: 90 + (n % 10),
    threshold: 90,
    since: '2026-01-01T00:00:00.000Z',
    at: '2026-01-01T00:05:00.000Z',
    by: null,
    comment: null,
    link: `https://rmm.example/agents/a${n}`,
    ...over,
  };
}
const grouped = (count: number, over: Partial<NotificationItem> = {}): NotificationMessage => ({ delivery_id: `d-${count}`, test: false, items: Array.from({ length: count }, (_, i) => item(i + 1, over)) });

describe('ntfy', () => {
  it('publishes JSON to the server root with the Bearer token', async () => {
    const got = await testSend({ type: 'ntfy', name: 'n', settings: { server_url: r.url('/'), topic: 'rmm-alerts' }, secrets: { token: 'tk_0123456789abcdefghijklmnop' } });
    expect(got.path).toBe('/');
    expect(got.headers.authorization).toBe('Bearer tk_0123456789abcdefghijklmnop');
    expect(got.json).toEqual({ topic: 'rmm-alerts', title: 'RMM test notification', message: expect.stringContaining('Agent: Test agent'), priority: 3, tags: ['test_tube', 'rotating_light'] });
  });

  it('gives firing messages priority 4 and a click link, unless a priority is set', async () => {
    const body = await deliverTo({ type: 'ntfy', name: 'n', settings: { server_url: r.url('/'), topic: 't1' } }, grouped(2));
    expect(body).toMatchObject({ topic: 't1', title: 'RMM alerts: 2 firing', priority: 4, tags: ['rotating_light'], click: 'https://rmm.example/agents/a1' });
    expect(body.message).toContain('[FIRING] Acme: agent-2 (host-2.example)');
    const quiet = await deliverTo({ type: 'ntfy', name: 'n', settings: { server_url: r.url('/'), topic: 't2', priority: 2 } }, grouped(1, { event: 'resolved' }));
    expect(quiet).toMatchObject({ priority: 2, tags: ['white_check_mark'] });
  });
});

describe('Teams', () => {
  it('posts a message with one Adaptive Card 1.4 to the Workflows URL', async () => {
    const got = await testSend({ type: 'teams', name: 't', secrets: { webhook_url: r.url('/workflows/abc/triggers/manual/paths/invoke?sig=s3cret') } });
    expect(got.path).toBe('/workflows/abc/triggers/manual/paths/invoke?sig=s3cret');
    expect(got.json.type).toBe('message');
    expect(got.json.attachments).toHaveLength(1);
    const [attachment] = got.json.attachments;
    expect(attachment.contentType).toBe('application/vnd.microsoft.card.adaptive');
    expect(attachment.content).toMatchObject({ type: 'AdaptiveCard', version: '1.4', $schema: 'http://adaptivecards.io/schemas/adaptive-card.json' });
    expect(attachment.content.body[0]).toMatchObject({ type: 'TextBlock', text: 'RMM test notification' });
  });

  it('shows each item as a container with its facts and a console button', async () => {
    const body = await deliverTo({ type: 'teams', name: 't', secrets: { webhook_url: r.url('/wf') } }, grouped(2));
    const containers = body.attachments[0].content.body.filter((b: { type: string }) => b.type === 'Container');
    expect(containers).toHaveLength(2);
    expect(containers[0].items[0]).toMatchObject({ type: 'TextBlock', text: '[FIRING] Acme: agent-1 (host-1.example): disk_used_percent on / is 91.0 (> 90)', color: 'Attention' });
    expect(containers[0].items[1].facts).toEqual(expect.arrayContaining([{ title: 'Customer', value: 'Acme (K-1)' }, { title: 'Hostname', value: 'host-1.example' }, { title: 'Since', value: '2026-01-01 00:00:00 UTC' }]));
    expect(containers[0].items[2]).toEqual({ type: 'ActionSet', actions: [{ type: 'Action.OpenUrl', title: 'Open in console', url: 'https://rmm.example/agents/a1' }] });
  });
});

describe('Slack', () => {
  it('posts {text, blocks} with a header and a section per item, agent text escaped', async () => {
    const got = await testSend({ type: 'slack', name: 's', secrets: { webhook_url: r.url('/services/T0/B0/XYZ') } });
    expect(Object.keys(got.json).sort()).toEqual(['blocks', 'text']);
    expect(got.json.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'RMM test notification', emoji: true } });
    const body = await deliverTo({ type: 'slack', name: 's', secrets: { webhook_url: r.url('/services/T0/B0/XYZ') } }, grouped(1, { agent: { id: 'x', name: '<!channel> & co', hostname: 'h' } }));
    expect(body.text).toContain('&lt;!channel&gt; &amp; co');
    expect(body.text).not.toContain('<!channel>');
    const section = body.blocks[1];
    expect(section.type).toBe('section');
    expect(section.text.type).toBe('mrkdwn');
    expect(section.text.text).toContain('*Agent:* &lt;!channel&gt; &amp; co');
    expect(section.text.text).toContain('<https://rmm.example/agents/a1|Open in console>');
  });
});

describe('Discord', () => {
  it('sends content and one embed per item with title, description, url and colour, mentions off', async () => {
    const got = await testSend({ type: 'discord', name: 'd', secrets: { webhook_url: r.url('/api/webhooks/1/tok') } });
    expect(got.json.content).toContain('RMM test notification');
    expect(got.json.allowed_mentions).toEqual({ parse: [] });
    expect(got.json.embeds).toHaveLength(1);
    expect(Object.keys(got.json.embeds[0]).sort()).toEqual(['color', 'description', 'title']);
    const one = await deliverTo({ type: 'discord', name: 'd', secrets: { webhook_url: r.url('/api/webhooks/1/tok') } }, grouped(1));
    expect(one.embeds[0]).toMatchObject({ title: expect.stringContaining('[FIRING]'), url: 'https://rmm.example/agents/a1', color: 0xd93025 });
  });

  it('keeps within 10 embeds, 2000/4096/6000 characters when many long items come at once', async () => {
    const message = grouped(14, { summary: 'x'.repeat(5_000) });
    message.items[0]!.agent.name = '@everyone';
    const body = await deliverTo({ type: 'discord', name: 'd', secrets: { webhook_url: r.url('/api/webhooks/2/tok') } }, message);
    expect(body.embeds).toHaveLength(10);
    expect(body.embeds[9].title).toBe('… and 5 more');
    expect(body.content.length).toBeLessThanOrEqual(2_000);
    let total = 0;
    for (const e of body.embeds as Array<{ title: string; description: string }>) {
      expect(e.title.length).toBeLessThanOrEqual(256);
      expect(e.description.length).toBeLessThanOrEqual(4_096);
      total += e.title.length + e.description.length;
    }
    expect(total).toBeLessThanOrEqual(6_000);
    expect(body.allowed_mentions).toEqual({ parse: [] });
  });
});

describe('Telegram', () => {
  it('calls sendMessage on the bot path with {chat_id, text, disable_web_page_preview}', async () => {
    const token = `987654321:${'AAbbCCdd_-'.repeat(3)}`;
    const got = await testSend({ type: 'telegram', name: 'tg', settings: { chat_id: '-1001234567890', api_url: r.url('/tg/') }, secrets: { bot_token: token } });
    expect(got.path).toBe(`/tg/bot${token}/sendMessage`);
    expect(got.json).toEqual({ chat_id: '-1001234567890', text: expect.stringMatching(/^RMM test notification\n\n/), disable_web_page_preview: true });
    const many = await deliverTo({ type: 'telegram', name: 'tg', settings: { chat_id: '@rmm_alerts', api_url: r.url('/') }, secrets: { bot_token: token } }, grouped(100));
    expect(many.text.length).toBeLessThanOrEqual(4_096);
    expect(many.text).toMatch(/^RMM alerts: 100 firing\n\n\[FIRING\] Acme: agent-1/);
  });
});
