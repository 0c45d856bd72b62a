// Server settings (contract §10): URLs are validated, the installer key must be a real agent key, both
// secrets are shown only as hints and stored encrypted, partial updates keep the rest, and only unscoped
// callers with the right permission reach them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { expectError } from './helpers/assertions.js';
import { DEVICE_SETTING_DEFAULTS } from '../src/modules/settings/device-settings.js';

let t: TestApp;
let token: string;
let auth: Record<string, string>;
beforeAll(async () => {
  t = await buildTestApp();
  token = await adminToken(t);
  auth = bearer(token);
});
afterAll(() => t.close());


const getSettings = (headers = auth) => t.app.inject({ method: 'GET', url: '/api/v1/settings', headers });
const putSettings = (payload: Record<string, unknown>, headers = auth) =>
  t.app.inject({ method: 'PUT', url: '/api/v1/settings', headers, payload });

async function storedRows(): Promise<Record<string, string>> {
  const rows = await t.db.db.selectFrom('settings').select(['key', 'value']).execute();
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

const WEBHOOK_SECRET = 'whsec-0123456789-abcdefXYZ9';

describe('settings', () => {
  // Runs first: the database is fresh.
  it('are all null on a new installation', async () => {
    const res = await getSettings();
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ backend_url: null, ws_url: null, installer_api_key: null, webhook_secret: null, passwordless_login: false, ...DEVICE_SETTING_DEFAULTS });
  });

  it('store an https backend_url and a wss ws_url', async () => {
    const payload = { backend_url: 'https://rmm.example.com', ws_url: 'wss://rmm.example.com/api/v1/agent/ws' };
    const res = await putSettings(payload);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ...payload, installer_api_key: null, webhook_secret: null, passwordless_login: false, ...DEVICE_SETTING_DEFAULTS });
    expect((await getSettings()).json()).toEqual({ ...payload, installer_api_key: null, webhook_secret: null, passwordless_login: false, ...DEVICE_SETTING_DEFAULTS });
  });

  it.each([
    ['backend_url', 'ftp://x'],
    ['backend_url', 'not a url'],
    ['ws_url', 'ftp://x'],
    ['ws_url', 'not a url'],
  ])('refuse %s = %j with 400 and details, changing nothing', async (field, value) => {
    const before = (await getSettings()).json();
    const body = expectError(await putSettings({ [field]: value }), 400, 'VALIDATION_ERROR');
    expect(body.details).toEqual([expect.objectContaining({ path: field, message: expect.any(String) })]);
    expect((await getSettings()).json()).toEqual(before);
  });

  it('refuse an unknown field with 400', async () => {
    const before = (await getSettings()).json();
    expectError(await putSettings({ backend_url: 'https://other.example.com', colour: 'blue' }), 400, 'VALIDATION_ERROR');
    expect((await getSettings()).json()).toEqual(before);
  });

  it('accept an existing agent key as installer_api_key and show only its hint', async () => {
    const agentKey = await createKey(t.app, auth, 'agent');
    const res = await putSettings({ installer_api_key: agentKey.key });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ installer_api_key: agentKey.key_hint });
    expect(res.body).not.toContain(agentKey.key);
    const read = await getSettings();
    expect(read.json()).toMatchObject({ installer_api_key: agentKey.key_hint });
    expect(read.body).not.toContain(agentKey.key);
  });

  it('refuse a write key or a made-up key as installer_api_key with 400', async () => {
    const before = (await getSettings()).json();
    const writeKey = await createKey(t.app, auth, 'write');
    for (const key of [writeKey.key, 'rmm_' + 'A'.repeat(40)]) {
      const body = expectError(await putSettings({ installer_api_key: key }), 400, 'VALIDATION_ERROR');
      expect(body.details).toEqual([expect.objectContaining({ path: 'installer_api_key' })]);
    }
    expect((await getSettings()).json()).toEqual(before);
  });

  it('show webhook_secret as "…" and its last 4 characters', async () => {
    const res = await putSettings({ webhook_secret: WEBHOOK_SECRET });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ webhook_secret: '…XYZ9' });
    expect(res.body).not.toContain(WEBHOOK_SECRET);
    expect((await getSettings()).json()).toMatchObject({ webhook_secret: '…XYZ9' });
  });

  it('refuse a webhook_secret shorter than 16 characters with 400', async () => {
    const body = expectError(await putSettings({ webhook_secret: '0123456789abcde' }), 400, 'VALIDATION_ERROR');
    expect(body.details).toEqual([expect.objectContaining({ path: 'webhook_secret' })]);
    expect((await getSettings()).json()).toMatchObject({ webhook_secret: '…XYZ9' });
  });

  it('keep both secrets encrypted at rest', async () => {
    const agentKey = await createKey(t.app, auth, 'agent');
    expect((await putSettings({ installer_api_key: agentKey.key, webhook_secret: WEBHOOK_SECRET })).statusCode).toBe(200);
    const rows = await storedRows();
    expect(rows.installer_api_key).toBeDefined();
    expect(rows.webhook_secret).toBeDefined();
    const all = JSON.stringify(rows);
    expect(all).not.toContain(agentKey.key);
    expect(all).not.toContain(agentKey.key.slice(8, -4));
    expect(all).not.toContain(WEBHOOK_SECRET);
    expect(all).not.toContain(Buffer.from(WEBHOOK_SECRET).toString('base64'));
  });

  it('clear a setting with null and leave fields not given unchanged', async () => {
    const agentKey = await createKey(t.app, auth, 'agent');
    const full = {
      backend_url: 'https://rmm.example.net',
      ws_url: 'wss://rmm.example.net/ws',
      installer_api_key: agentKey.key,
      webhook_secret: WEBHOOK_SECRET,
    };
    expect((await putSettings(full)).statusCode).toBe(200);
    const expected = { ...full, installer_api_key: agentKey.key_hint, webhook_secret: '…XYZ9', passwordless_login: false, ...DEVICE_SETTING_DEFAULTS };

    const partial = await putSettings({ ws_url: 'wss://ws.example.net/agent' });
    expect(partial.json()).toEqual({ ...expected, ws_url: 'wss://ws.example.net/agent' });

    const cleared = await putSettings({ backend_url: null, webhook_secret: null });
    expect(cleared.statusCode, cleared.body).toBe(200);
    const after = { ...expected, ws_url: 'wss://ws.example.net/agent', backend_url: null, webhook_secret: null };
    expect(cleared.json()).toEqual(after);
    expect((await getSettings()).json()).toEqual(after);
    const rows = await storedRows();
    expect(rows).not.toHaveProperty('backend_url');
    expect(rows).not.toHaveProperty('webhook_secret');

    const empty = await putSettings({ ws_url: null, installer_api_key: null });
    expect(empty.json()).toEqual({ backend_url: null, ws_url: null, installer_api_key: null, webhook_secret: null, passwordless_login: false, ...DEVICE_SETTING_DEFAULTS });
  });
});

describe('who may use settings', () => {
  it('lets a read key GET but not PUT (403)', async () => {
    const readKey = await createKey(t.app, auth, 'read');
    const before = (await getSettings()).json();
    const res = await getSettings(apiKey(readKey.key));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual(before);
    expectError(await putSettings({ backend_url: 'https://evil.example.com' }, apiKey(readKey.key)), 403, 'FORBIDDEN');
    expect((await getSettings()).json()).toEqual(before);
  });

  it('refuses a customer-scoped admin key on GET and PUT (403)', async () => {
    const customer = await createCustomer(t.app, token, '6001');
    const scoped = await createKey(t.app, auth, 'admin', customer.id);
    const before = (await getSettings()).json();
    expectError(await getSettings(apiKey(scoped.key)), 403, 'FORBIDDEN');
    expectError(await putSettings({ backend_url: 'https://evil.example.com' }, apiKey(scoped.key)), 403, 'FORBIDDEN');
    expect((await getSettings()).json()).toEqual(before);
  });
});

describe('device session settings (issue 59)', () => {
  it('change one at a time, keep the others, refuse values out of range, and audit turning recording off', async () => {
    const res = await putSettings({ device_recording: false, device_idle_minutes: 5 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ device_recording: false, device_idle_minutes: 5, device_shells_per_agent: DEVICE_SETTING_DEFAULTS.device_shells_per_agent });
    const before = (await getSettings()).json();
    for (const bad of [{ device_idle_minutes: 0 }, { device_shells_per_agent: 1.5 }, { device_recording: 'no' }, { device_upload_max_bytes: -1 }]) {
      expectError(await putSettings(bad), 400, 'VALIDATION_ERROR');
    }
    expect((await getSettings()).json()).toEqual(before);
    const audit = await t.app.inject({ method: 'GET', url: '/api/v1/audit?action=settings.update', headers: auth });
    expect(audit.statusCode, audit.body).toBe(200);
    expect(JSON.stringify(audit.json())).toContain('device_recording=false');
    await putSettings({ device_recording: true, device_idle_minutes: DEVICE_SETTING_DEFAULTS.device_idle_minutes });
  });
});
