// /notification-channels (issue 31) through the real app: create, read, list, replace and delete with
// secrets shown only as hints and kept when a PUT omits them, the outbox's pending count in the status,
// hostile or SSRF-bound input refused with the contract's error body and nothing stored, customer scope
// (a scoped key sees 404 for other customers' and global channels and cannot create global ones), read
// keys that list but cannot write, and the audit entries, which never carry a secret.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';

const SECRET = 'whsec-channel-0123456789abcdef';
const TOKEN = 'tk_ntfy_secret_token_abcdefghijklmnop';

let t: TestApp;
let strict: TestApp;
let admin: Record<string, string>;
const customers: Array<{ id: number }> = [];

beforeAll(async () => {
  t = await buildTestApp({ env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  strict = await buildTestApp();
  admin = bearer(await adminToken(t));
  customers.push(await createCustomer(t.app, admin.authorization!.slice(7), 'K-1'), await createCustomer(t.app, admin.authorization!.slice(7), 'K-2'));
});
afterAll(async () => {
  await t?.close();
  await strict?.close();
});

type Channel = { id: number; name: string; type: string; customer_id: number | null; enabled: boolean; settings: Record<string, unknown>; secrets: Record<string, string>; status: Record<string, unknown> };

const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers: Record<string, string>, payload?: object, app = t) =>
  app.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });

async function create(payload: object, headers = admin): Promise<Channel> {
  const res = await call('POST', '/notification-channels', headers, payload);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as Channel;
}

const storedCount = async () => Number((await t.db.db.selectFrom('notification_channels').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

const webhook = (url = 'http://127.0.0.1:9/hook', extra: object = {}) => ({ type: 'webhook', name: 'Ops hook', settings: { url }, ...extra });

describe('channels and their secrets', () => {
  it('creates, reads and lists a channel with its secret only as a hint', async () => {
    const created = await create(webhook('http://127.0.0.1:9/hook', { secrets: { secret: SECRET } }));
    expect(created).toMatchObject({ name: 'Ops hook', type: 'webhook', customer_id: null, enabled: true, settings: { url: 'http://127.0.0.1:9/hook' }, secrets: { secret: 'whse…cdef' } });
    expect(created.status).toEqual({ last_attempt_at: null, last_delivered_at: null, last_error: null, failing_since: null, pending: 0 });
    const one = await call('GET', `/notification-channels/${created.id}`, admin);
    expect(one.json()).toEqual(created);
    const list = await call('GET', '/notification-channels', admin);
    expect((list.json() as Channel[]).map((c) => c.id)).toContain(created.id);
    for (const body of [one.body, list.body, JSON.stringify(created)]) expect(body).not.toContain(SECRET);
    const row = await t.db.db.selectFrom('notification_channels').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(row.sealed_secrets).toMatch(/^v1:/);
    expect(JSON.stringify(row)).not.toContain(SECRET);
  });

  it('keeps a secret a PUT omits, replaces a given one, and clears one set to null', async () => {
    const ntfy = 'http://127.0.0.1:9/';
    const ch = await create({ type: 'ntfy', name: 'Phone', settings: { topic: 'rmm-alerts', server_url: ntfy }, secrets: { token: TOKEN } });
    expect(ch.settings).toEqual({ server_url: ntfy, topic: 'rmm-alerts' });
    expect(ch.secrets).toEqual({ token: 'tk_n…mnop' });

    const kept = await call('PUT', `/notification-channels/${ch.id}`, admin, { name: 'Phone 2', settings: { topic: 'other', server_url: ntfy, priority: 5 } });
    expect(kept.statusCode, kept.body).toBe(200);
    expect(kept.json()).toMatchObject({ name: 'Phone 2', settings: { server_url: ntfy, topic: 'other', priority: 5 }, secrets: { token: 'tk_n…mnop' } });

    // The token would go to another server: it must be given again.
    const moved = await call('PUT', `/notification-channels/${ch.id}`, admin, { name: 'Phone 2', settings: { topic: 'other', server_url: 'https://ntfy.example.org' } });
    expect(expectError(moved, 400, 'VALIDATION_ERROR').details).toEqual([{ path: 'secrets.token', message: 'must be given again when settings.server_url changes' }]);

    const cleared = await call('PUT', `/notification-channels/${ch.id}`, admin, { name: 'Phone 3', settings: { topic: 'other', server_url: ntfy }, secrets: { token: null } });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(cleared.json()).toMatchObject({ name: 'Phone 3', secrets: {} });
    const row = await t.db.db.selectFrom('notification_channels').select(['sealed_secrets', 'settings']).where('id', '=', ch.id).executeTakeFirstOrThrow();
    expect(row.sealed_secrets).toBeNull();
    expect(row.settings).toEqual({ server_url: ntfy, topic: 'other' });
  });

  it('keeps enabled as it is when a PUT leaves it out, and refuses a change of type', async () => {
    const ch = await create({ type: 'slack', name: 'Slack', enabled: false, secrets: { webhook_url: 'http://127.0.0.1:9/services/T000/B000/XXXXXXXXXXXXXXXX' } });
    expect(ch.secrets).toEqual({ webhook_url: 'http://127.0.0.1:9/…XXXX' });
    const renamed = await call('PUT', `/notification-channels/${ch.id}`, admin, { name: 'Slack ops' });
    expect(renamed.json()).toMatchObject({ name: 'Slack ops', enabled: false, secrets: ch.secrets });
    const retyped = await call('PUT', `/notification-channels/${ch.id}`, admin, { type: 'discord', name: 'x' });
    expect(expectError(retyped, 400, 'VALIDATION_ERROR').details).toEqual([{ path: 'type', message: 'is slack; a channel cannot change its type (create a new one)' }]);
    const moved = await call('PUT', `/notification-channels/${ch.id}`, admin, { type: 'slack', customer_id: customers[0]!.id, name: 'x' });
    expect(expectError(moved, 400, 'VALIDATION_ERROR').details).toEqual([{ path: 'customer_id', message: 'is null (global); a channel cannot move to another customer (create a new one)' }]);
    const same = await call('PUT', `/notification-channels/${ch.id}`, admin, { type: 'slack', customer_id: null, name: 'Slack ops' });
    expect(same.statusCode, same.body).toBe(200);
    const required = await call('PUT', `/notification-channels/${ch.id}`, admin, { name: 'x', secrets: { webhook_url: null } });
    expect(expectError(required, 400, 'VALIDATION_ERROR').details).toEqual([{ path: 'secrets.webhook_url', message: 'is required and cannot be cleared' }]);
  });

  it('counts undelivered, not failed outbox rows as pending', async () => {
    const ch = await create(webhook());
    const now = new Date('2026-01-01T00:00:00Z');
    const row = (extra: object) => ({ channel_id: ch.id, event: 'firing' as const, payload: '{}', created_at: now, due_at: now, ...extra });
    await t.db.db
      .insertInto('notification_outbox')
      .values([row({}), row({}), row({ delivered_at: now }), row({ failed_at: now })])
      .execute();
    const res = await call('GET', `/notification-channels/${ch.id}`, admin);
    expect((res.json() as Channel).status.pending).toBe(2);
  });

  it('deletes a channel: {ok: true}, then 404', async () => {
    const ch = await create(webhook());
    expect((await call('DELETE', `/notification-channels/${ch.id}`, admin)).json()).toEqual({ ok: true });
    expectError(await call('GET', `/notification-channels/${ch.id}`, admin), 404, 'NOT_FOUND');
    expectError(await call('DELETE', `/notification-channels/${ch.id}`, admin), 404, 'NOT_FOUND');
    expectError(await call('POST', `/notification-channels/${ch.id}/test`, admin), 404, 'NOT_FOUND');
  });
});

describe('refusing input', () => {
  const hostile: Array<[string, object]> = [
    ['a name over 100 characters', webhook(undefined, { name: 'x'.repeat(101) })],
    ['an empty name', webhook(undefined, { name: '  ' })],
    ['a URL over 2000 characters', webhook(`http://127.0.0.1:9/${'a'.repeat(2000)}`)],
    ['a URL with credentials', webhook('http://user:pw@127.0.0.1:9/')],
    ['a non-http URL', webhook('file:///etc/passwd')],
    ['a secret in the clear-text settings', { type: 'webhook', name: 'x', settings: { url: 'http://127.0.0.1:9/', secret: SECRET } }],
    ['an unknown secret', webhook(undefined, { secrets: { password: 'x' } })],
    ['a short HMAC secret', webhook(undefined, { secrets: { secret: 'short' } })],
    ['21 recipients', { type: 'email', name: 'm', settings: { host: '127.0.0.1', from: 'a@example.com', to: Array.from({ length: 21 }, (_, i) => `u${i}@example.com`) } }],
    ['no recipient', { type: 'email', name: 'm', settings: { host: '127.0.0.1', from: 'a@example.com', to: [] } }],
    ['a header in the sender', { type: 'email', name: 'm', settings: { host: '127.0.0.1', from: 'a@example.com\r\nBcc: x@evil.test', to: ['b@example.com'] } }],
    ['a bad SMTP host', { type: 'email', name: 'm', settings: { host: 'mail host; rm', from: 'a@example.com', to: ['b@example.com'] } }],
    ['a Slack channel without its webhook URL', { type: 'slack', name: 's' }],
    ['a malformed bot token', { type: 'telegram', name: 't', settings: { chat_id: '-1001' }, secrets: { bot_token: 'abc/../x' } }],
    ['a chat id that is not one', { type: 'telegram', name: 't', settings: { chat_id: '1; drop' }, secrets: { bot_token: `123:${'a'.repeat(30)}` } }],
    ['a token with a line break', { type: 'ntfy', name: 'n', settings: { topic: 'a' }, secrets: { token: 'abc\r\nx: y' } }],
    ['an unknown type', { type: 'pager', name: 'p' }],
    ['a customer that does not exist', webhook(undefined, { customer_id: 999_999 })],
  ];
  it.each(hostile)('refuses %s with the error body and stores nothing', async (_label, payload) => {
    const before = await storedCount();
    const res = await call('POST', '/notification-channels', admin, payload);
    expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expect(res.json()).toMatchObject({ error: expect.any(String), code: expect.any(String), request_id: expect.any(String) });
    expect(await storedCount()).toBe(before);
  });

  it.each([
    ['the metadata address', 'http://169.254.169.254/latest/meta-data/', 'settings.url points to a cloud metadata address: 169.254.169.254'],
    ['a link-local address', 'http://[fe80::1]/', 'settings.url points to a link-local address: fe80::1'],
    ['the metadata name', 'http://metadata.google.internal/computeMetadata/v1/', 'settings.url points to a cloud metadata address: metadata.google.internal'],
  ])('refuses %s even with loopback allowed (400, nothing stored)', async (_label, url, message) => {
    const before = await storedCount();
    const body = expectError(await call('POST', '/notification-channels', admin, webhook(url)), 400, 'VALIDATION_ERROR');
    expect(body.details).toEqual([{ path: 'settings.url', message }]);
    expect(await storedCount()).toBe(before);
  });

  it('refuses loopback URLs unless WEBHOOK_ALLOW_LOOPBACK is set, for every HTTP type', async () => {
    const token = bearer(await adminToken(strict));
    const bodies = [
      [webhook('http://127.0.0.1:9/hook'), 'settings.url'],
      [{ type: 'teams', name: 't', secrets: { webhook_url: 'http://localhost:9/workflows/abc' } }, 'secrets.webhook_url'],
      [{ type: 'ntfy', name: 'n', settings: { topic: 'a', server_url: 'http://[::1]:9' } }, 'settings.server_url'],
      [{ type: 'telegram', name: 't', settings: { chat_id: '1', api_url: 'http://127.1:9' }, secrets: { bot_token: `123:${'a'.repeat(30)}` } }, 'settings.api_url'],
    ] as const;
    for (const [payload, path] of bodies) {
      const body = expectError(await call('POST', '/notification-channels', token, payload, strict), 400, 'VALIDATION_ERROR');
      expect(body.details).toEqual([{ path, message: expect.stringMatching(/points to a loopback address: .*WEBHOOK_ALLOW_LOOPBACK=true/) }]);
      expect(body.error).not.toContain('/workflows/abc');
    }
    const rows = await strict.db.db.selectFrom('notification_channels').select('id').execute();
    expect(rows).toEqual([]);
  });
});

describe('customer scope and access', () => {
  it('keeps a scoped key to its own customer: 404 for others and global channels, 403 creating a global one', async () => {
    const [mine, theirs] = customers as [{ id: number }, { id: number }];
    const scoped = apiKey((await createKey(t.app, admin, 'write', mine.id)).key);
    const own = await create(webhook(undefined, { customer_id: mine.id }), scoped);
    expect(own.customer_id).toBe(mine.id);
    const other = await create(webhook(undefined, { customer_id: theirs.id }));
    const global = await create(webhook());

    const listed = (await call('GET', '/notification-channels', scoped)).json() as Channel[];
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.every((c) => c.customer_id === mine.id)).toBe(true);
    expect((await call('GET', `/notification-channels?customer_id=${theirs.id}`, scoped)).json()).toEqual([]);
    for (const id of [other.id, global.id]) {
      expectError(await call('GET', `/notification-channels/${id}`, scoped), 404, 'NOT_FOUND');
      expectError(await call('PUT', `/notification-channels/${id}`, scoped, { name: 'mine now' }), 404, 'NOT_FOUND');
      expectError(await call('POST', `/notification-channels/${id}/test`, scoped), 404, 'NOT_FOUND');
      expectError(await call('DELETE', `/notification-channels/${id}`, scoped), 404, 'NOT_FOUND');
    }
    expectError(await call('POST', '/notification-channels', scoped, webhook()), 403, 'FORBIDDEN');
    expectError(await call('POST', '/notification-channels', scoped, webhook(undefined, { customer_id: theirs.id })), 404, 'NOT_FOUND');
    // The unscoped admin filters by customer.
    const filtered = (await call('GET', `/notification-channels?customer_id=${theirs.id}`, admin)).json() as Channel[];
    expect(filtered.map((c) => c.id)).toEqual([other.id]);
  });

  it('lets a read key list and read but not create, change, test or delete', async () => {
    const read = apiKey((await createKey(t.app, admin, 'read')).key);
    const ch = await create(webhook());
    expect((await call('GET', '/notification-channels', read)).statusCode).toBe(200);
    expect((await call('GET', `/notification-channels/${ch.id}`, read)).statusCode).toBe(200);
    expectError(await call('POST', '/notification-channels', read, webhook()), 403, 'FORBIDDEN');
    expectError(await call('PUT', `/notification-channels/${ch.id}`, read, { name: 'x' }), 403, 'FORBIDDEN');
    expectError(await call('POST', `/notification-channels/${ch.id}/test`, read), 403, 'FORBIDDEN');
    expectError(await call('DELETE', `/notification-channels/${ch.id}`, read), 403, 'FORBIDDEN');
  });

  it('audits create, update, test and delete under their names, without secrets', async () => {
    const ch = await create({ type: 'discord', name: 'Audit me', secrets: { webhook_url: 'http://127.0.0.1:9/api/webhooks/1/audit-secret-token' } });
    await call('PUT', `/notification-channels/${ch.id}`, admin, { name: 'Audit me 2', secrets: { webhook_url: 'http://127.0.0.1:9/api/webhooks/1/audit-secret-token-2' } });
    await call('POST', `/notification-channels/${ch.id}/test`, admin);
    await call('DELETE', `/notification-channels/${ch.id}`, admin);
    const res = await call('GET', '/audit?limit=50', admin);
    const entries = (res.json() as Array<{ action: string; path: string }>).filter((e) => e.path.includes(`/notification-channels/${ch.id}`) || e.action === 'notification_channel.create');
    expect(entries.map((e) => e.action)).toEqual(expect.arrayContaining(['notification_channel.create', 'notification_channel.update', 'notification_channel.test', 'notification_channel.delete']));
    expect(res.body).not.toContain('audit-secret-token');
  });
});
