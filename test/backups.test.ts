// Configuration backups (contract §7, acceptance 2) end to end: the real server listening, reference agents
// answering `backup` from a config file the test rewrites. Deduplication by hash, exact bytes back
// (format=xml), list/latest, the diff and its limits, scope, 404s, 409 when offline, bad answers.
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { expectError } from './helpers/assertions.js';
import { fixtureText } from './helpers/fixtures.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';

/** A reference agent on a firewall whose configuration is the file `config`; `asked`: commands it answered. */
interface Firewall { id: string; hostname: string; key: string; config: string; state: string; live: LiveAgent; asked: string[] }

const clock = new FakeClock('2026-05-01T10:00:00Z');
let t: LiveServer;
let dir: string;
let admin: Record<string, string>;
let writeA: Record<string, string>;
let fwA: Firewall, fwB: Firewall; // customer A's and customer B's firewall

/** (Re)starts the firewall's agent on its state file: same agent id, same config file. */
async function boot(fw: Omit<Firewall, 'id' | 'live'>): Promise<Firewall> {
  const live = await t.startAgent(fw.key, { hostname: fw.hostname, platform: 'freebsd', stateFile: fw.state, backupFile: fw.config });
  live.agent.on('command', ({ command }) => fw.asked.push(command));
  return Object.assign(fw, { live, id: live.id });
}

async function firewall(hostname: string, customerId?: number): Promise<Firewall> {
  const slug = path.join(dir, hostname.replace(/\W+/g, '_'));
  const fw = { hostname, key: (await createKey(t.app, admin, 'agent', customerId)).key, config: `${slug}.xml`, state: `${slug}.json`, asked: [] };
  await writeFile(fw.config, '<empty/>\n');
  return boot(fw);
}

beforeAll(async () => {
  t = await startLiveServer({ clock });
  dir = await mkdtemp(path.join(os.tmpdir(), 'backups-test-'));
  const token = await adminToken(t);
  admin = bearer(token);
  const a = await createCustomer(t.app, token, '5001', 'Alpha');
  const b = await createCustomer(t.app, token, '5002', 'Beta');
  writeA = apiKey((await createKey(t.app, admin, 'write', a.id)).key);
  fwA = await firewall('fw-kunde1 (Zentrale)', a.id);
  fwB = await firewall('fw-kunde2', b.id);
});
afterAll(async () => (await t?.close(), await rm(dir, { recursive: true, force: true })));

const call = (method: 'GET' | 'POST' | 'DELETE', url: string, headers = admin) => t.app.inject({ method, url: `/api/v1${url}`, headers });
const sha256 = (s: string) => createHash('sha256').update(Buffer.from(s, 'utf8')).digest('hex');
const stored = (agentId: string) => t.db.db.selectFrom('config_backups').select(['id', 'hash']).where('agent_id', '=', agentId).execute();

interface Backup { id: number; agent_id: string; hash: string; size: number; created_at: string; created?: boolean; content?: string }
const meta = ({ created: _c, ...rest }: Backup) => rest;

/** Writes the firewall's config file, takes a backup, expects `status`, and moves the clock on a minute. */
async function backup(fw: Firewall, content: string, status = 201): Promise<Backup> {
  await writeFile(fw.config, content, 'utf8');
  const res = await call('POST', `/agents/${fw.id}/backup`);
  expect(res.statusCode, res.body).toBe(status);
  await clock.advance(60_000);
  return res.json() as Backup;
}

describe('POST /agents/{id}/backup', () => {
  const config = fixtureText('opnsense-config.xml');

  it('stores the config the agent sends: 201 with its SHA-256 and byte size', async () => {
    const first = await backup(fwA, config);
    expect(first).toEqual({ id: expect.any(Number), agent_id: fwA.id, hash: sha256(config), size: Buffer.byteLength(config), created_at: '2026-05-01T10:00:00.000Z', created: true });
    expect(fwA.asked).toEqual(['backup']);
  });

  it('answers 200 with the stored backup and created:false when the config is unchanged, storing nothing', async () => {
    const [before] = await stored(fwA.id);
    const again = await backup(fwA, config, 200);
    expect(again).toMatchObject({ id: before!.id, hash: before!.hash, created_at: '2026-05-01T10:00:00.000Z', created: false });
    expect(await stored(fwA.id)).toHaveLength(1);
  });

  it('stores a changed config as a second backup', async () => {
    const changed = await backup(fwA, config.replace('<hostname>fw-kunde1</hostname>', '<hostname>fw-kunde1-neu</hostname>'));
    expect(changed.created).toBe(true);
    expect(await stored(fwA.id)).toHaveLength(2);
  });

  it('is 409 AGENT_NOT_CONNECTED while the agent is stopped, and stores nothing', async () => {
    await fwA.live.stop();
    try {
      expectError(await call('POST', `/agents/${fwA.id}/backup`), 409, 'AGENT_NOT_CONNECTED');
    } finally {
      await boot(fwA);
    }
    expect(await stored(fwA.id)).toHaveLength(2);
  });

  it('is 502 AGENT_ERROR for an empty config or one too large for the socket, and stores nothing', async () => {
    await writeFile(fwA.config, '');
    expect(expectError(await call('POST', `/agents/${fwA.id}/backup`), 502, 'AGENT_ERROR').error).toMatch(/empty/);
    await writeFile(fwA.config, `<big>${'x'.repeat(5 * 1024 * 1024)}</big>`);
    expect(expectError(await call('POST', `/agents/${fwA.id}/backup`), 502, 'AGENT_ERROR').error).toMatch(/larger than 4194304 bytes/);
    expect(await stored(fwA.id)).toHaveLength(2);
    expect(fwA.live.agent.connected).toBe(true);
  });

  it('is 502 AGENT_ERROR when a misbehaving agent answers without content', async () => {
    const key = (await createKey(t.app, admin, 'agent')).key;
    const id = await t.register(key, 'fw-rogue', undefined, 'freebsd');
    const rogue = await t.openRaw(id, key);
    for (const data of [{}, { content: 42 }, null, { content: 'a\u0000b' }, ['<a/>']]) {
      const res = Promise.resolve(call('POST', `/agents/${id}/backup`));
      const command = await rogue.nextCommand();
      expect(command).toMatchObject({ command: 'backup', params: {} });
      rogue.ws.send(JSON.stringify({ type: 'response', id: command.id, success: true, data }));
      expectError(await res, 502, 'AGENT_ERROR');
    }
    expect(await stored(id)).toEqual([]);
    rogue.ws.close();
  });

  it("is 404 for another customer's agent, which is never asked", async () => {
    const asked = fwB.asked.length;
    expectError(await call('POST', `/agents/${fwB.id}/backup`, writeA), 404, 'NOT_FOUND');
    expectError(await call('GET', `/agents/${fwB.id}/backups`, writeA), 404, 'NOT_FOUND');
    expectError(await call('GET', `/agents/${fwB.id}/backups/latest`, writeA), 404, 'NOT_FOUND');
    expect(fwB.asked.length).toBe(asked);
    await writeFile(fwA.config, config.replace('<hostname>fw-kunde1</hostname>', '<hostname>fw-kunde1-neu</hostname>'));
    expect((await call('POST', `/agents/${fwA.id}/backup`, writeA)).statusCode).toBe(200); // its own: unchanged config
  });
});

describe('reading backups', () => {
  const exact = '<?xml version="1.0" encoding="UTF-8"?>\r\n<opnsense>\r\n  <descr>Büro Zürich – 5 € 😀</descr>\r\n</opnsense>\r\n';
  let b1: Backup;
  let b2: Backup;
  let b3: Backup;

  beforeAll(async () => {
    expectError(await call('GET', `/agents/${fwB.id}/backups/latest`), 404, 'NOT_FOUND'); // none yet
    b1 = await backup(fwB, '<a>1</a>\n');
    b2 = await backup(fwB, exact);
    b3 = await backup(fwB, '<a>3</a>\n');
  });

  it('lists newest first without content, up to `limit` (default 50, clamped to 1000)', async () => {
    const all = await call('GET', `/agents/${fwB.id}/backups`);
    expect(all.statusCode, all.body).toBe(200);
    expect(all.json()).toEqual([b3, b2, b1].map(meta));
    expect((await call('GET', `/agents/${fwB.id}/backups?limit=2`)).json()).toEqual([expect.objectContaining({ id: b3.id }), expect.objectContaining({ id: b2.id })]);
    expect((await call('GET', `/agents/${fwB.id}/backups?limit=5000`)).json()).toHaveLength(3);
    for (const bad of ['0', '-1', '1.5', 'x']) expectError(await call('GET', `/agents/${fwB.id}/backups?limit=${bad}`), 400, 'VALIDATION_ERROR');
  });

  it('returns one backup, or the latest, as JSON with its content', async () => {
    const one = await call('GET', `/agents/${fwB.id}/backups/${b2.id}`);
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json()).toEqual({ id: b2.id, agent_id: fwB.id, hash: sha256(exact), size: Buffer.byteLength(exact), created_at: b2.created_at, content: exact });
    expect((await call('GET', `/agents/${fwB.id}/backups/latest?format=json`)).json()).toMatchObject({ id: b3.id, content: '<a>3</a>\n' });
  });

  it('returns the exact bytes of the file with format=xml (non-ASCII, CRLF) as an attachment named after the agent', async () => {
    const res = await call('GET', `/agents/${fwB.id}/backups/${b2.id}?format=xml`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.rawPayload.equals(Buffer.from(exact, 'utf8'))).toBe(true);
    expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="fw-kunde2-20260501T${b2.created_at.slice(11, 19).replace(/:/g, '')}Z-${b2.id}.xml"`);
    const latestA = await call('GET', `/agents/${fwA.id}/backups/latest?format=xml`);
    expect(latestA.headers['content-disposition']).toMatch(/^attachment; filename="fw-kunde1_Zentrale-20260501T\d{6}Z-\d+\.xml"$/);
  });

  it('refuses other formats and ids that are not numbers with 400', async () => {
    expectError(await call('GET', `/agents/${fwB.id}/backups/${b2.id}?format=yaml`), 400, 'VALIDATION_ERROR');
    expectError(await call('GET', `/agents/${fwB.id}/backups/latest?format=text`), 400, 'VALIDATION_ERROR');
    expectError(await call('GET', `/agents/${fwB.id}/backups/newest`), 400, 'VALIDATION_ERROR');
  });

  it("is 404 for another agent's backup id (get, diff, delete), which stays", async () => {
    const [ofA] = await stored(fwA.id);
    expectError(await call('GET', `/agents/${fwB.id}/backups/${ofA!.id}`), 404, 'NOT_FOUND');
    expectError(await call('GET', `/agents/${fwB.id}/backups/${ofA!.id}?format=xml`), 404, 'NOT_FOUND');
    expectError(await call('GET', `/agents/${fwB.id}/backups/diff?a=${b1.id}&b=${ofA!.id}`), 404, 'NOT_FOUND');
    expectError(await call('DELETE', `/agents/${fwB.id}/backups/${ofA!.id}`), 404, 'NOT_FOUND');
    expectError(await call('GET', `/agents/${fwB.id}/backups/999999`), 404, 'NOT_FOUND');
    expect((await stored(fwA.id)).map((r) => r.id)).toContain(ofA!.id);
  });
});

describe('GET /agents/{id}/backups/diff', () => {
  const before = fixtureText('opnsense-config.xml');
  const after = before
    .replace('<hostname>fw-kunde1</hostname>', '<hostname>fw-kunde1-neu</hostname>')
    .replace('    <ssh><enabled>enabled</enabled><permitrootlogin>0</permitrootlogin></ssh>\n', '')
    .replace('<timezone>Europe/Berlin</timezone>\n', '<timezone>Europe/Berlin</timezone>\n    <language>de_DE</language>\n');
  let fw: Firewall;
  let a: Backup;
  let b: Backup;
  const diff = (x: number, y: number, extra = '') => call('GET', `/agents/${fw.id}/backups/diff?a=${x}&b=${y}${extra}`);

  beforeAll(async () => {
    fw = await firewall('fw-diff');
    a = await backup(fw, before);
    b = await backup(fw, after);
  });

  it('shows the changed lines as a unified diff from a to b, with the counts', async () => {
    const res = await diff(a.id, b.id);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { a: Backup; b: Backup; added: number; removed: number; diff: string };
    expect(body).toMatchObject({ a: meta(a), b: meta(b), added: 2, removed: 2 });
    const lines = body.diff.split('\n');
    expect(lines.slice(0, 2)).toEqual([`--- backup-${a.id}.xml\t${a.created_at}`, `+++ backup-${b.id}.xml\t${b.created_at}`]);
    expect(lines.filter((l) => /^[-+][^-+]/.test(l)).sort()).toEqual([
      '+    <hostname>fw-kunde1-neu</hostname>',
      '+    <language>de_DE</language>',
      '-    <hostname>fw-kunde1</hostname>',
      '-    <ssh><enabled>enabled</enabled><permitrootlogin>0</permitrootlogin></ssh>',
    ]);
    expect(lines.filter((l) => l.startsWith('@@'))).not.toHaveLength(0);

    const text = await diff(a.id, b.id, '&format=text');
    expect(text.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(text.body).toBe(body.diff);
  });

  it('swaps added and removed the other way round, and is empty between equal contents', async () => {
    expect((await diff(b.id, a.id)).json()).toMatchObject({ added: 2, removed: 2 });
    expect((await diff(b.id, a.id, '&format=text')).body).toContain('\n+    <hostname>fw-kunde1</hostname>\n');
    expect((await diff(a.id, a.id)).json()).toMatchObject({ added: 0, removed: 0, diff: '' });
  });

  it('needs both ids and a known format (400)', async () => {
    expectError(await call('GET', `/agents/${fw.id}/backups/diff?a=${a.id}`), 400, 'VALIDATION_ERROR');
    expectError(await diff(a.id, b.id, '&format=html'), 400, 'VALIDATION_ERROR');
  });

  it('refuses with 413 when more than 2000 lines changed', async () => {
    const lines = (tag: string) => Array.from({ length: 1200 }, (_, i) => `<${tag}>${i}</${tag}>\n`).join('');
    const x = await backup(fw, lines('x'));
    const y = await backup(fw, lines('y'));
    expectError(await diff(x.id, y.id), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('refuses with 413 when the two backups hold more than 20 MiB together', async () => {
    // No agent can send such a backup (a socket message holds 4 MiB), but the limit guards the diff of
    // whatever is stored: two rows of 10 MiB are put into the database directly.
    const big = (c: string) => `${c.repeat(10 * 1024 * 1024 + 1)}\n`;
    const seed = (content: string) =>
      t.db.db.insertInto('config_backups').values({ agent_id: fw.id, hash: sha256(content), size: Buffer.byteLength(content), content, created_at: clock.now() }).returning('id').executeTakeFirstOrThrow();
    const x = await seed(big('a'));
    const y = await seed(big('b'));
    expectError(await diff(x.id, y.id), 413, 'PAYLOAD_TOO_LARGE');
    expect((await diff(x.id, x.id)).json()).toMatchObject({ added: 0, removed: 0 });
  });
});

describe('deleting', () => {
  it('deletes one backup ({deleted:true}); it is gone afterwards, and is recorded in the audit log', async () => {
    const fw = await firewall('fw-delete');
    const one = await backup(fw, '<one/>');
    const two = await backup(fw, '<two/>');
    const res = await call('DELETE', `/agents/${fw.id}/backups/${two.id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ deleted: true });
    expectError(await call('GET', `/agents/${fw.id}/backups/${two.id}`), 404, 'NOT_FOUND');
    expectError(await call('DELETE', `/agents/${fw.id}/backups/${two.id}`), 404, 'NOT_FOUND');
    expect((await call('GET', `/agents/${fw.id}/backups/latest`)).json()).toMatchObject({ id: one.id });
    const audit = (await call('GET', '/audit?limit=1000')).json() as Array<{ action: string; path: string; status_code: number }>;
    expect(audit).toContainEqual(expect.objectContaining({ action: 'backup.delete', path: `/api/v1/agents/${fw.id}/backups/${two.id}`, status_code: 200 }));
    expect(audit).toContainEqual(expect.objectContaining({ action: 'backup.create', path: `/api/v1/agents/${fw.id}/backup`, status_code: 201 }));
  });

  it("takes an agent's backups along when the agent is deleted", async () => {
    const fw = await firewall('fw-gone');
    await backup(fw, '<gone/>');
    expect(await stored(fw.id)).toHaveLength(1);
    await fw.live.stop(); // a running agent would register again at once
    expect((await call('DELETE', `/agents/${fw.id}`)).statusCode).toBe(200);
    expect(await stored(fw.id)).toEqual([]);
    expectError(await call('GET', `/agents/${fw.id}/backups`), 404, 'NOT_FOUND');
  });
});

describe('OpenAPI', () => {
  it('documents the backup routes, the XML download and the limits, and stays a valid document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
      paths: Record<string, Record<string, { description?: string; responses: Record<string, { content?: Record<string, unknown> }> }>>;
    };
    const one = doc.paths['/api/v1/agents/{id}/backups/{bid}']!.get!;
    expect(Object.keys(one.responses['200']!.content!)).toEqual(['application/json', 'application/xml']);
    expect(doc.paths['/api/v1/agents/{id}/backups/diff']!.get!.description).toContain('20 MiB');
    expect(doc.paths['/api/v1/agents/{id}/backup']!.post!.responses).toHaveProperty('201');
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
  });
});
