// Installer keys stay within their customer (issue 30, item 5). The key put into rmm-agent.json belongs to
// the downloading key's customer: a customer-scoped caller gets its customer's own installer key (an agent
// key made on first use, kept encrypted, shown as a hint and rotatable), never another customer's and
// never the global one; the global installer_api_key goes only into unscoped downloads, and an unscoped
// caller may ask for a customer's package with ?customer_id=.
import type { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { hashApiKey } from '../src/modules/api-keys/key-format.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';

let t: TestApp;
let admin: Record<string, string>;
let customer1: number;
let customer2: number;
let key1: string; // agent key of customer 1
let key2: string; // agent key of customer 2
let globalKey: string; // unscoped agent key, the settings' installer_api_key

beforeAll(async () => {
  t = await buildTestApp({ captureLogs: true });
  const token = await adminToken(t);
  admin = bearer(token);
  customer1 = (await createCustomer(t.app, token, 'K-1')).id;
  customer2 = (await createCustomer(t.app, token, 'K-2')).id;
  key1 = (await createKey(t.app, admin, 'agent', customer1)).key;
  key2 = (await createKey(t.app, admin, 'agent', customer2)).key;
  globalKey = (await createKey(t.app, admin, 'agent')).key;
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from('MZ fake setup'), 'setup.exe');
  zip.end();
  const body = await buffer(zip.outputStream as Readable);
  const up = await t.app.inject({ method: 'POST', url: '/api/v1/installer/upload?platform=windows', headers: { ...admin, 'content-type': 'application/zip' }, payload: body });
  expect(up.statusCode, up.body).toBe(201);
  const settings = await t.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: admin, payload: { backend_url: 'https://rmm.example.net', installer_api_key: globalKey } });
  expect(settings.statusCode, settings.body).toBe(200);
});
afterAll(() => t.close());

const download = (headers: Record<string, string>, query = '') =>
  t.app.inject({ method: 'GET', url: `/api/v1/installer/download?platform=windows${query}`, headers });

/** Downloads the package and returns the api_key of its rmm-agent.json (and the raw bytes). */
async function injectedKey(headers: Record<string, string>, query = ''): Promise<{ key: string; raw: Buffer }> {
  const res = await download(headers, query);
  expect(res.statusCode, res.body).toBe(200);
  const zip = await yauzl.fromBufferPromise(res.rawPayload, { lazyEntries: true });
  for await (const entry of zip.eachEntry()) {
    if (entry.fileName !== 'rmm-agent.json') continue;
    const config = JSON.parse((await buffer(await zip.openReadStreamPromise(entry))).toString('utf8')) as { api_key: string; server_url: string };
    expect(config.server_url).toBe('https://rmm.example.net');
    return { key: config.api_key, raw: res.rawPayload };
  }
  throw new Error('no rmm-agent.json in the package');
}

/** The stored API key a key text stands for (agent keys may not call /auth/me). */
const me = async (key: string) => {
  const row = await t.db.db.selectFrom('api_keys').select(['permissions', 'customer_id']).where('key_hash', '=', hashApiKey(key)).executeTakeFirst();
  expect(row, 'a stored API key').toBeDefined();
  return row!;
};
const wauList = (customer: number, key: string, file = 'included_apps.txt') =>
  t.app.inject({ method: 'GET', url: `/api/v1/customers/${customer}/wau/${file}?api_key=${key}` });
const installerKeyView = (customer: number, headers = admin) => t.app.inject({ method: 'GET', url: `/api/v1/customers/${customer}/installer-key`, headers });
const rotate = (customer: number, headers = admin) => t.app.inject({ method: 'POST', url: `/api/v1/customers/${customer}/installer-key`, headers });

describe("a customer's agent key downloading the installer", () => {
  it("finds only a key of its own customer in rmm-agent.json, which cannot read another customer's lists", async () => {
    const { key: injected, raw } = await injectedKey(apiKey(key2));
    expect([injected === globalKey, injected === key1, injected === key2]).toEqual([false, false, false]);
    expect(raw.includes(globalKey)).toBe(false);
    expect(await me(injected)).toMatchObject({ permissions: 'agent', customer_id: customer2 });
    for (const file of ['included_apps.txt', 'excluded_apps.txt', 'included', 'excluded']) {
      expectError(await wauList(customer1, injected, file), 404, 'NOT_FOUND');
      expect((await wauList(customer2, injected, file)).statusCode).toBe(200);
    }
    // The same key again, for any caller of that customer; customer 1 gets its own.
    expect((await injectedKey(apiKey(key2))).key).toBe(injected);
    const read2 = (await createKey(t.app, admin, 'read', customer2)).key;
    expect((await injectedKey(apiKey(read2))).key).toBe(injected);
    const injected1 = (await injectedKey(apiKey(key1))).key;
    expect(injected1).not.toBe(injected);
    expect(await me(injected1)).toMatchObject({ permissions: 'agent', customer_id: customer1 });
    expect(t.logs().join('\n')).not.toContain(injected);
  });

  it('may name its own customer with ?customer_id=, and no other', async () => {
    const own = (await injectedKey(apiKey(key2))).key;
    expect((await injectedKey(apiKey(key2), `&customer_id=${customer2}`)).key).toBe(own);
    expectError(await download(apiKey(key2), `&customer_id=${customer1}`), 404, 'NOT_FOUND');
    expectError(await download(apiKey(key2), '&customer_id=999999'), 404, 'NOT_FOUND');
  });
});

describe('an unscoped caller downloading the installer', () => {
  it("gets the global installer key without customer_id, and that customer's key with it", async () => {
    expect((await injectedKey(admin)).key).toBe(globalKey);
    expect((await injectedKey(apiKey(globalKey))).key).toBe(globalKey);
    const own2 = (await injectedKey(apiKey(key2))).key;
    expect((await injectedKey(admin, `&customer_id=${customer2}`)).key).toBe(own2);
    expect((await injectedKey(apiKey(globalKey), `&customer_id=${customer2}`)).key).toBe(own2);
    expectError(await download(admin, '&customer_id=999999'), 404, 'NOT_FOUND');
    expectError(await download(admin, '&customer_id=abc'), 400, 'VALIDATION_ERROR');
  });

  it('cannot make a customer-scoped key the global installer key', async () => {
    const body = expectError(await t.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: admin, payload: { installer_api_key: key1 } }), 400, 'VALIDATION_ERROR');
    expect(body.error).toMatch(/customer/);
    expect((await injectedKey(admin)).key).toBe(globalKey);
  });
});

describe("the customer's installer key", () => {
  it("is made once, however many downloads ask at the same time, and listed with the customer's keys", async () => {
    const fresh = (await createCustomer(t.app, admin.authorization!.slice(7), 'K-3')).id;
    const freshKey = (await createKey(t.app, admin, 'agent', fresh)).key;
    expect((await installerKeyView(fresh)).json()).toEqual({ customer_id: fresh, api_key_id: null, key_hint: null, created_at: null });
    const keys = await Promise.all(Array.from({ length: 4 }, () => injectedKey(apiKey(freshKey))));
    expect(new Set(keys.map((k) => k.key)).size).toBe(1);
    const view = (await installerKeyView(fresh)).json() as { api_key_id: number; key_hint: string };
    expect(view.key_hint).toBe(`${keys[0]!.key.slice(0, 8)}…${keys[0]!.key.slice(-4)}`);
    const listed = (await t.app.inject({ method: 'GET', url: `/api/v1/customers/${fresh}/apikeys`, headers: admin })).json() as Array<{ id: number; name: string; permissions: string }>;
    expect(listed.filter((k) => k.permissions === 'agent').map((k) => k.id)).toContain(view.api_key_id);
    expect(listed.find((k) => k.id === view.api_key_id)!.name).toBe('Installer key');
    // Deleting the customer deletes its keys, the installer key with them.
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/customers/${fresh}`, headers: admin })).statusCode).toBe(200);
    expect(await t.db.db.selectFrom('customer_installer_keys').selectAll().where('customer_id', '=', fresh).execute()).toEqual([]);
    expectError(await download(apiKey(keys[0]!.key)), 401, 'UNAUTHORIZED');
  });

  it('is shown as a hint only, within the caller’s scope, and read keys can see it but not rotate it', async () => {
    const res = await installerKeyView(customer2);
    expect(res.statusCode).toBe(200);
    const own2 = (await injectedKey(apiKey(key2))).key;
    expect(res.body).not.toContain(own2);
    const read1 = apiKey((await createKey(t.app, admin, 'read', customer1)).key);
    expectError(await installerKeyView(customer2, read1), 404, 'NOT_FOUND');
    expect((await installerKeyView(customer1, read1)).statusCode).toBe(200);
    expectError(await rotate(customer1, read1), 403, 'FORBIDDEN');
    expectError(await installerKeyView(customer1, apiKey(key1)), 403, 'FORBIDDEN');
    const write1 = apiKey((await createKey(t.app, admin, 'write', customer1)).key);
    expectError(await rotate(customer2, write1), 404, 'NOT_FOUND');
  });

  it('rotates: new packages carry a new key, shown once; the previous one keeps working until deleted', async () => {
    const before = (await injectedKey(apiKey(key2))).key;
    const res = await rotate(customer2);
    expect(res.statusCode, res.body).toBe(201);
    const rotated = res.json() as { key: string; key_hint: string; api_key_id: number };
    expect(rotated.key).not.toBe(before);
    expect((await injectedKey(apiKey(key2))).key).toBe(rotated.key);
    expect((await installerKeyView(customer2)).json()).toMatchObject({ api_key_id: rotated.api_key_id, key_hint: rotated.key_hint });
    // Devices set up with the previous key go on working; it is an ordinary key of the customer now.
    expect((await wauList(customer2, before)).statusCode).toBe(200);
    const listed = (await t.app.inject({ method: 'GET', url: `/api/v1/customers/${customer2}/apikeys`, headers: admin })).json() as Array<{ id: number; name: string; key_hint: string }>;
    const previous = listed.find((k) => k.key_hint === `${before.slice(0, 8)}…${before.slice(-4)}`)!;
    expect(previous.name).toMatch(/^Installer key \(replaced \d{4}-\d{2}-\d{2}\)$/);
    const audit = await t.app.inject({ method: 'GET', url: '/api/v1/audit?action=installer.key.rotate', headers: admin });
    expect(audit.body).toContain('installer.key.rotate');
    expect(audit.body).not.toContain(rotated.key);
    expect(t.logs().join('\n')).not.toContain(rotated.key);

    // Deleting the current key revokes it; the next download makes another.
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/apikeys/${rotated.api_key_id}`, headers: admin })).statusCode).toBe(200);
    expectError(await wauList(customer2, rotated.key), 401, 'UNAUTHORIZED');
    const next = (await injectedKey(apiKey(key2))).key;
    expect([next === rotated.key, next === before]).toEqual([false, false]);
    expect(await me(next)).toMatchObject({ customer_id: customer2 });
  });
});
