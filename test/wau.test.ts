// Software-update rules and inventory per customer (issue 12 acceptance, contract §3): the inventory
// aggregated over a customer's Windows agents, the rules CRUD, the two plain-text lists winget-autoupdate
// reads with Last-Modified and 304, and who may read and change them.
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { insertRule, recordListChange } from '../src/modules/wau/wau.repo.js';
import { FakeClock } from '../src/platform/clock.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { heartbeat, program, registerAgent } from './helpers/wau.js';

// Later than the real time, so that change times come from this clock, not from customers' creation.
const clock = new FakeClock('2030-01-01T10:00:00Z');
let t: TestApp;
let admin: Record<string, string>;
let customerA: number;
let customerB: number;
let keyA: string; // agent key scoped to customer A
let keyB: string;

beforeAll(async () => {
  t = await buildTestApp({ clock });
  admin = bearer(await adminToken(t));
  customerA = (await createCustomer(t.app, admin.authorization!.slice(7), 'W-100')).id;
  customerB = (await createCustomer(t.app, admin.authorization!.slice(7), 'W-200')).id;
  keyA = (await createKey(t.app, admin, 'agent', customerA)).key;
  keyB = (await createKey(t.app, admin, 'agent', customerB)).key;
});
afterAll(() => t.close());

const wau = (customer: number, rest: string) => `/api/v1/customers/${customer}/wau/${rest}`;
/**
 * A GET. A list asked for within the second of a rule change is held until that second is over (its
 * Last-Modified is the next second): the clock is moved to the next second whenever something waits on it.
 */
const get = async (url: string, headers: Record<string, string> = admin) => {
  let done = false;
  const answer = t.app.inject({ method: 'GET', url, headers }).finally(() => {
    done = true;
  });
  while (!done) {
    if (clock.pendingSleepers > 0) await clock.advance(1000 - (clock.now().getTime() % 1000));
    await new Promise((resolve) => setImmediate(resolve));
  }
  return answer;
};
const addRule = (customer: number, payload: Record<string, unknown>, headers = admin) =>
  t.app.inject({ method: 'POST', url: wau(customer, 'rules'), headers, payload });
const removeRules = (customer: number, query: string, payload?: Record<string, unknown>) =>
  t.app.inject({ method: 'DELETE', url: `${wau(customer, 'rules')}${query}`, headers: admin, ...(payload ? { payload } : {}) });

describe('1. inventory aggregation', () => {
  it("counts each version over the customer's Windows agents; Linux data and other customers stay out", async () => {
    const firefox = (v: string) => program('Mozilla Firefox (x64 de)', v, 'Mozilla');
    const chrome = (v: string) => program('Google Chrome', v, 'Google LLC');
    const fleet: Array<[string, Array<Record<string, unknown>>]> = [
      ['ws-01', [firefox('133.0'), chrome('131.0.6778.86'), program('7-Zip 24.08 (x64)', '24.08', 'Igor Pavlov')]],
      ['ws-02', [chrome('130.0.6723.117'), firefox('133.0'), program('paint.net', '5.1.2', 'dotPDN LLC')]],
      [
        'ws-03',
        [
          firefox('132.0'),
          chrome('131.0.6778.86'),
          program('Zoom Workplace', '6.0.2', 'Zoom'),
          program('Zoom Workplace', '5.17.11', 'Zoom'),
          program('Microsoft Update Health Tools', '5.72.0.0', 'Microsoft Corporation', { system_component: true }),
          program('Windows SDK AddOn', '10.1.0.0', 'Microsoft Corporation', { SystemComponent: 1 }),
          program('Office 16 Click-to-Run Licensing Component', '16.0', 'Microsoft Corporation', { SystemComponent: '1' }),
        ],
      ],
    ];
    for (const [host, software] of fleet) await heartbeat(t.app, keyA, await registerAgent(t.app, keyA, host), 'windows', software);
    const linux = await registerAgent(t.app, keyA, 'pve-01', 'linux');
    await heartbeat(t.app, keyA, linux, 'linux', [firefox('133.0'), program('Linux Only Tool', '1', 'Nobody')]);
    const other = await registerAgent(t.app, keyB, 'ws-b-01');
    await heartbeat(t.app, keyB, other, 'windows', [firefox('133.0'), firefox('131.0'), program('Customer B Only', '1', 'B')]);

    const res = await get(wau(customerA, 'inventory'));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([
      { name: '7-Zip 24.08 (x64)', publisher: 'Igor Pavlov', agent_count: 1, versions: [{ version: '24.08', agent_count: 1 }] },
      {
        name: 'Google Chrome',
        publisher: 'Google LLC',
        agent_count: 3,
        versions: [
          { version: '131.0.6778.86', agent_count: 2 },
          { version: '130.0.6723.117', agent_count: 1 },
        ],
      },
      {
        name: 'Mozilla Firefox (x64 de)',
        publisher: 'Mozilla',
        agent_count: 3,
        versions: [
          { version: '133.0', agent_count: 2 },
          { version: '132.0', agent_count: 1 },
        ],
      },
      // Alphabetical, not byte order: "paint.net" comes before "Zoom".
      { name: 'paint.net', publisher: 'dotPDN LLC', agent_count: 1, versions: [{ version: '5.1.2', agent_count: 1 }] },
      // One agent with two versions counts once for the program.
      {
        name: 'Zoom Workplace',
        publisher: 'Zoom',
        agent_count: 1,
        versions: [
          { version: '6.0.2', agent_count: 1 },
          { version: '5.17.11', agent_count: 1 },
        ],
      },
    ]);
    expect((await get(wau(customerB, 'inventory'))).json()).toEqual([
      { name: 'Customer B Only', publisher: 'B', agent_count: 1, versions: [{ version: '1', agent_count: 1 }] },
      {
        name: 'Mozilla Firefox (x64 de)',
        publisher: 'Mozilla',
        agent_count: 1,
        versions: [
          { version: '133.0', agent_count: 1 },
          { version: '131.0', agent_count: 1 },
        ],
      },
    ]);
  });
});

describe('2. rules and the list files', () => {
  it('lists allow rules in included and block rules in excluded, exactly in the list format', async () => {
    const rules = [
      { action: 'allow', package_id: 'Mozilla.Firefox', display_name: 'Mozilla Firefox' },
      { action: 'allow', package_id: 'mRemoteNG.mRemoteNG' },
      { action: 'allow', package_id: 'Notepad++.Notepad++', display_name: 'Notepad++' },
      { action: 'allow', package_id: 'Google.Chrome' },
      { action: 'block', package_id: 'Microsoft.Edge*', display_name: 'Edge, every channel' },
      { action: 'block', package_id: '7zip.7zip' },
    ];
    for (const rule of rules) {
      const res = await addRule(customerA, rule);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toEqual({
        id: expect.any(Number),
        customer_id: customerA,
        action: rule.action,
        package_id: rule.package_id,
        display_name: rule.display_name ?? rule.package_id,
        created_at: '2030-01-01T10:00:00.000Z',
      });
    }
    const included = await get(wau(customerA, 'included'), apiKey(keyA));
    expect(included.statusCode).toBe(200);
    expect(included.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(included.body).toBe('Google.Chrome\nMozilla.Firefox\nNotepad++.Notepad++\nmRemoteNG.mRemoteNG\n');
    expect((await get(wau(customerA, 'excluded'), apiKey(keyA))).body).toBe('7zip.7zip\nMicrosoft.Edge*\n');
    const listed = (await get(wau(customerA, 'rules'))).json() as Array<{ package_id: string }>;
    expect(listed.map((r) => r.package_id)).toEqual(['7zip.7zip', 'Google.Chrome', 'Microsoft.Edge*', 'Mozilla.Firefox', 'Notepad++.Notepad++', 'mRemoteNG.mRemoteNG']);
    // Another customer's lists are its own; with no rules they are empty.
    const empty = await get(wau(customerB, 'included'), apiKey(keyB));
    expect([empty.statusCode, empty.body, empty.headers['content-type']]).toEqual([200, '', 'text/plain; charset=utf-8']);
  });

  it('refuses a duplicate package id (in any case, for either action) with 409 and an invalid one with 400', async () => {
    for (const rule of [
      { action: 'allow', package_id: 'Mozilla.Firefox' },
      { action: 'block', package_id: 'mozilla.firefox' },
    ]) {
      expectError(await addRule(customerA, rule), 409, 'CONFLICT');
    }
    const invalid = ['', '.hidden', '-flag', 'Two Words', 'a/b', 'Foo\nBar', '#comment', 'x'.repeat(129), 'Ünïcode.App'];
    for (const package_id of invalid) {
      expectError(await addRule(customerA, { action: 'allow', package_id }), 400, 'VALIDATION_ERROR');
    }
    expectError(await addRule(customerA, { action: 'pin', package_id: 'Valid.Id' }), 400, 'VALIDATION_ERROR');
    expect((await addRule(customerB, { action: 'allow', package_id: 'Mozilla.Firefox' })).statusCode).toBe(201); // other customer
    expect((await addRule(customerB, { action: 'allow', package_id: 'x'.repeat(128) })).statusCode).toBe(201);
    expect((await get(wau(customerA, 'included'))).body).toBe('Google.Chrome\nMozilla.Firefox\nNotepad++.Notepad++\nmRemoteNG.mRemoteNG\n');
  });

  it('deletes by id (query or body) and by package_id (query or body), answering the count', async () => {
    const rules = (await get(wau(customerA, 'rules'))).json() as Array<{ id: number; package_id: string }>;
    const idOf = (p: string) => rules.find((r) => r.package_id === p)!.id;
    expect((await removeRules(customerA, `?id=${idOf('Google.Chrome')}`)).json()).toEqual({ deleted: 1 });
    expect((await removeRules(customerA, '', { id: idOf('7zip.7zip') })).json()).toEqual({ deleted: 1 });
    expect((await removeRules(customerA, '?package_id=mremoteng.MREMOTENG')).json()).toEqual({ deleted: 1 });
    expect((await removeRules(customerA, '', { package_id: 'Microsoft.Edge*' })).json()).toEqual({ deleted: 1 });
    expect((await removeRules(customerA, '?package_id=Not.There')).json()).toEqual({ deleted: 0 });
    // A rule id of another customer is not this customer's rule.
    const foreign = ((await get(wau(customerB, 'rules'))).json() as Array<{ id: number }>)[0]!.id;
    expect((await removeRules(customerA, `?id=${foreign}`)).json()).toEqual({ deleted: 0 });
    expectError(await removeRules(customerA, ''), 400, 'VALIDATION_ERROR');
    expectError(await removeRules(customerA, '?id=abc'), 400, 'VALIDATION_ERROR');
    expectError(await removeRules(customerA, '?id=1', { id: 2 }), 400, 'VALIDATION_ERROR');
    expect((await get(wau(customerA, 'included'))).body).toBe('Mozilla.Firefox\nNotepad++.Notepad++\n');
    expect((await get(wau(customerA, 'excluded'))).body).toBe('');
    expect((await get(wau(customerB, 'included'))).body).toBe(`Mozilla.Firefox\n${'x'.repeat(128)}\n`);
  });

  it('records rule changes in the audit log', async () => {
    const audit = (action: string) => get(`/api/v1/audit?action=${action}`).then((r) => r.json() as Array<{ method: string; status_code: number }>);
    expect((await audit('wau.rule.create')).filter((e) => e.status_code === 201)).toHaveLength(8);
    expect((await audit('wau.rule.delete')).filter((e) => e.method === 'DELETE').length).toBeGreaterThanOrEqual(5);
  });
});

describe('3. Last-Modified, ETag and the conditional requests', () => {
  const fetchList = (list: string, since?: string, etag?: string) =>
    get(wau(customerA, list), { ...apiKey(keyA), ...(since ? { 'if-modified-since': since } : {}), ...(etag ? { 'if-none-match': etag } : {}) });
  const addAt = async (time: string, package_id: string, action = 'allow') => {
    clock.set(time);
    expect((await addRule(customerA, { action, package_id })).statusCode).toBe(201);
  };

  it('answers 304 for the current validators, and 200 with the new list after each rule change', async () => {
    clock.set('2030-01-01T10:00:30Z');
    const first = await fetchList('included');
    const lastModified = first.headers['last-modified'] as string;
    const etag = first.headers.etag as string;
    expect(lastModified).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    expect(first.headers.date).toBe('Tue, 01 Jan 2030 10:00:30 GMT');
    expect(Date.parse(lastModified)).toBeLessThanOrEqual(Date.parse(first.headers.date!));

    const unchanged = await fetchList('included', lastModified);
    expect([unchanged.statusCode, unchanged.body, unchanged.headers['last-modified'], unchanged.headers.etag]).toEqual([304, '', lastModified, etag]);
    expect((await fetchList('included', new Date(Date.parse(lastModified) + 60_000).toUTCString())).statusCode).toBe(304);
    expect((await fetchList('included', new Date(Date.parse(lastModified) - 1000).toUTCString())).statusCode).toBe(200);
    expect((await fetchList('included', 'not a date')).statusCode).toBe(200);
    expect((await fetchList('included', undefined, `"other", W/${etag}`)).statusCode).toBe(304);
    expect((await fetchList('included', undefined, '*')).statusCode).toBe(304);
    // If-None-Match decides when both are sent.
    expect((await fetchList('included', lastModified, '"other"')).statusCode).toBe(200);

    // A change at 10:00:30.250; asked for at .500, the answer waits for the second to end and carries
    // the next second as Last-Modified, never after Date.
    await addAt('2030-01-01T10:00:30.250Z', 'VideoLAN.VLC');
    clock.set('2030-01-01T10:00:30.500Z');
    const afterCreate = await fetchList('included', lastModified);
    expect([afterCreate.statusCode, afterCreate.body]).toEqual([200, 'Mozilla.Firefox\nNotepad++.Notepad++\nVideoLAN.VLC\n']);
    expect([afterCreate.headers.date, afterCreate.headers['last-modified']]).toEqual(['Tue, 01 Jan 2030 10:00:31 GMT', 'Tue, 01 Jan 2030 10:00:31 GMT']);
    expect(afterCreate.headers.etag).not.toBe(etag);
    expect((await fetchList('included', undefined, etag)).statusCode).toBe(200);
    const secondModified = 'Tue, 01 Jan 2030 10:00:31 GMT';
    expect((await fetchList('included', secondModified)).statusCode).toBe(304);

    clock.advance(3_600_000);
    expect((await removeRules(customerA, `?package_id=${encodeURIComponent('Notepad++.Notepad++')}`)).json()).toEqual({ deleted: 1 });
    const afterDelete = await fetchList('included', secondModified);
    expect([afterDelete.statusCode, afterDelete.body]).toEqual([200, 'Mozilla.Firefox\nVideoLAN.VLC\n']);
    expect(afterDelete.headers['last-modified']).toBe('Tue, 01 Jan 2030 11:00:32 GMT'); // deleted at 11:00:31
    // One time per customer: a change of either list is the other's change too.
    expect((await fetchList('excluded', secondModified)).statusCode).toBe(200);
    expect((await fetchList('excluded', 'Tue, 01 Jan 2030 11:00:32 GMT')).statusCode).toBe(304);
    // Deleting nothing changes nothing.
    clock.advance(60_000);
    expect((await removeRules(customerA, '?package_id=Not.There')).json()).toEqual({ deleted: 0 });
    expect((await fetchList('included', 'Tue, 01 Jan 2030 11:00:32 GMT')).statusCode).toBe(304);
  });

  it('keeps Last-Modified and the ETag identical in every answer until the next change (issue 57: it moved for 2 s)', async () => {
    await addAt('2030-01-01T12:00:00.250Z', 'Stable.One', 'block');
    const answers = [];
    for (const time of ['2030-01-01T12:00:00.400Z', '2030-01-01T12:00:00.900Z', '2030-01-01T12:00:01.100Z', '2030-01-01T12:00:02.600Z', '2030-01-01T13:00:00Z']) {
      clock.set(time);
      const res = await fetchList('excluded');
      answers.push([res.headers['last-modified'], res.headers.etag]);
      expect(Date.parse(res.headers['last-modified']!), time).toBeLessThanOrEqual(Date.parse(res.headers.date!));
    }
    expect(new Set(answers.map((a) => a.join(' '))).size, JSON.stringify(answers)).toBe(1);
    expect(answers[0]![0]).toBe('Tue, 01 Jan 2030 12:00:01 GMT');
    // WAU downloads again only when Last-Modified is later than its copy (written at 12:00:01 at the earliest).
    const copy = Date.parse('Tue, 01 Jan 2030 12:00:01 GMT');
    await addAt('2030-01-01T13:00:05Z', 'Stable.Two', 'block');
    clock.set('2030-01-01T13:00:09Z');
    const changed = await fetchList('excluded', answers[0]![0]);
    expect(changed.statusCode).toBe(200);
    expect(Date.parse(changed.headers['last-modified']!)).toBeGreaterThan(copy);
  });

  it('gives two changes in one second one Last-Modified, which no answer carried before both were made', async () => {
    await addAt('2030-01-01T14:00:00.100Z', 'Twice.One', 'block');
    clock.set('2030-01-01T14:00:00.300Z');
    // Asked for between the two changes: held until the second is over, so it sees both.
    const between = t.app.inject({ method: 'GET', url: wau(customerA, 'excluded'), headers: apiKey(keyA) });
    await vi.waitFor(() => expect(clock.pendingSleepers).toBe(1));
    await addAt('2030-01-01T14:00:00.600Z', 'Twice.Two', 'block');
    await clock.advance(400);
    const res = await between;
    expect(res.body).toContain('Twice.One\nTwice.Two\n');
    expect([res.headers.date, res.headers['last-modified']]).toEqual(['Tue, 01 Jan 2030 14:00:01 GMT', 'Tue, 01 Jan 2030 14:00:01 GMT']);
  });

  it('waits for a rule change still committing, so that a list is never older than its Last-Modified says', async () => {
    // A change recorded at 15:00:00.900 whose transaction commits after a list was asked for at 15:00:01.100:
    // without waiting, that answer (Date 15:00:01) would lack the rule, and the change's Last-Modified
    // (15:00:01) would not be later than the copy WAU wrote then: the rule would never reach the PC.
    clock.set('2030-01-01T15:00:00.900Z');
    let asked: ReturnType<typeof get> | undefined;
    await t.db.db.transaction().execute(async (trx) => {
      await insertRule(trx, { customer_id: customerA, action: 'block', package_id: 'Committing.Late', display_name: 'Committing.Late', created_at: clock.now() });
      await recordListChange(trx, customerA, clock.now());
      clock.set('2030-01-01T15:00:01.100Z');
      asked = t.app.inject({ method: 'GET', url: wau(customerA, 'excluded'), headers: apiKey(keyA) });
      await delay(300); // the request reads meanwhile, as far as it can
    });
    const res = await asked!;
    expect(res.headers.date).toBe('Tue, 01 Jan 2030 15:00:01 GMT');
    expect(res.body).toContain('Committing.Late\n');
  });

  it("is the second after the customer's creation while it has never had a rule change", async () => {
    const fresh = await createCustomer(t.app, admin.authorization!.slice(7), 'W-300');
    const res = await get(wau(fresh.id, 'excluded'));
    expect([res.statusCode, res.body]).toEqual([200, '']);
    expect(res.headers['last-modified']).toBe(new Date((Math.floor(Date.parse(fresh.created_at) / 1000) + 1) * 1000).toUTCString());
  });
});

describe('who may read and change them', () => {
  it("lets a scoped agent key read its customer's lists only; other customers' are 404", async () => {
    expect((await get(wau(customerA, 'excluded'), apiKey(keyA))).statusCode).toBe(200);
    for (const list of ['included', 'excluded']) expectError(await get(wau(customerB, list), apiKey(keyA)), 404, 'NOT_FOUND');
    expectError(await get(wau(999_999, 'included'), apiKey(keyA)), 404, 'NOT_FOUND');
    for (const path of ['rules', 'inventory']) expectError(await get(wau(customerA, path), apiKey(keyA)), 403, 'FORBIDDEN');
    expectError(await addRule(customerA, { action: 'allow', package_id: 'Agent.Key' }, apiKey(keyA)), 403, 'FORBIDDEN');
  });

  it('lets read keys read but not change; scoped keys see only their customer', async () => {
    const read = apiKey((await createKey(t.app, admin, 'read')).key);
    expect((await get(wau(customerA, 'rules'), read)).statusCode).toBe(200);
    expectError(await addRule(customerA, { action: 'allow', package_id: 'Read.Key' }, read), 403, 'FORBIDDEN');
    const deleted = await t.app.inject({ method: 'DELETE', url: `${wau(customerA, 'rules')}?package_id=Mozilla.Firefox`, headers: read });
    expectError(deleted, 403, 'FORBIDDEN');
    const writeB = apiKey((await createKey(t.app, admin, 'write', customerB)).key);
    expect((await addRule(customerB, { action: 'block', package_id: 'Scoped.Write' }, writeB)).statusCode).toBe(201);
    expectError(await addRule(customerA, { action: 'block', package_id: 'Scoped.Write' }, writeB), 404, 'NOT_FOUND');
    expectError(await get(wau(customerA, 'inventory'), writeB), 404, 'NOT_FOUND');
    expect((await get(wau(customerA, 'included'))).body).toBe('Mozilla.Firefox\nVideoLAN.VLC\n');
  });
});
