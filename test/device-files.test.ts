// Files on the device (issue 59) through the API, a real reference agent over a real socket and real
// files in a temporary directory: uploads and downloads arrive exactly (whole and by Range), a hash
// mismatch leaves nothing, a directory of 50,000 entries pages completely, hostile paths are refused by
// the agent, only those who may write get in, and 20 transfers at once leave the agent answering.
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCommand } from '../src/agent/commands/index.js';
import type { CommandContext } from '../src/agent/commands/types.js';
import { expectError } from './helpers/assertions.js';
import { download, MiB, sha, upload, waitForFiles } from './helpers/device-files.js';
import { adminToken, apiKey, bearer, createCustomer, createKey, login, seedUser } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';

let s: LiveServer;
let admin: Record<string, string>;
let agent: LiveAgent;
let dir: string;

beforeAll(async () => {
  s = await startLiveServer({});
  admin = bearer(await adminToken(s));
  const agentKey = (await createKey(s.app, admin, 'agent')).key;
  agent = await s.startAgent(agentKey);
  await waitForFiles(s.app, admin, agent.id);
  dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-files-'));
}, 60_000);
afterAll(async () => {
  await s?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const api = (method: 'GET' | 'POST' | 'DELETE' | 'PUT', url: string, payload?: unknown, headers = admin) =>
  s.app.inject({ method, url: `/api/v1/agents/${agent.id}${url}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
const q = (params: Record<string, string>) => new URLSearchParams(params).toString();
const partsIn = async (where: string) => (await readdir(where)).filter((n) => n.includes('.rmm-part-'));

describe('transfers', () => {
  it('uploads 50 MiB of random bytes and downloads them back, SHA-256 equal, and records both sessions', async () => {
    const data = randomBytes(50 * MiB);
    const target = path.join(dir, 'big.bin');
    const put = await upload(s.url, admin, agent.id, target, data);
    expect(put.status, put.body.toString()).toBe(201);
    expect(JSON.parse(put.body.toString())).toEqual({ path: target, size: data.length, sha256: sha(data) });
    expect(sha(await readFile(target))).toBe(sha(data));

    const got = await download(s.url, admin, agent.id, target);
    expect(got.status).toBe(200);
    expect(got.headers['content-length']).toBe(String(data.length));
    expect(got.headers['accept-ranges']).toBe('bytes');
    expect(got.headers['content-disposition']).toBe(`attachment; filename="big.bin"; filename*=UTF-8''big.bin`);
    expect(got.sha256).toBe(sha(data));

    const rows = await s.db.db.selectFrom('device_sessions').selectAll().where('agent_id', '=', agent.id).execute();
    expect(rows.find((r) => r.kind === 'upload')).toMatchObject({ bytes_in: data.length, end_reason: 'completed' });
    expect(rows.find((r) => r.kind === 'download')).toMatchObject({ bytes_out: data.length, end_reason: 'completed' });
  });

  it('resumes a download exactly with Range bytes=N- and bytes=N-M, and answers 416 past the end', async () => {
    const data = randomBytes(3 * MiB + 12_345);
    const target = path.join(dir, 'ranged.bin');
    await writeFile(target, data);
    const from = await download(s.url, admin, agent.id, target, { range: 'bytes=1048577-', keep: true });
    expect(from.status).toBe(206);
    expect(from.headers['content-range']).toBe(`bytes 1048577-${data.length - 1}/${data.length}`);
    expect(from.body.equals(data.subarray(1_048_577))).toBe(true);

    const middle = await download(s.url, admin, agent.id, target, { range: 'bytes=1000-1999999', keep: true });
    expect(middle.status).toBe(206);
    expect(middle.headers['content-length']).toBe(String(1_999_000));
    expect(middle.body.equals(data.subarray(1000, 2_000_000))).toBe(true);

    const past = await download(s.url, admin, agent.id, target, { range: `bytes=${data.length}-` });
    expect(past.status).toBe(416);
    expect(past.headers['content-range']).toBe(`bytes */${data.length}`);
    expect(JSON.parse(past.body.toString())).toMatchObject({ code: 'RANGE_NOT_SATISFIABLE' });
  });

  it('keeps no file, and no temporary file, when the bytes do not match the announced SHA-256', async () => {
    const data = randomBytes(2 * MiB);
    const target = path.join(dir, 'mismatch.bin');
    const put = await upload(s.url, admin, agent.id, target, data, { sha256: sha(Buffer.from('something else')) });
    expect(put.status).toBe(400);
    expect(JSON.parse(put.body.toString())).toMatchObject({ code: 'CHECKSUM_MISMATCH' });
    await expect(stat(target)).rejects.toThrow(/ENOENT/);
    expect(await partsIn(dir)).toEqual([]);
  });

  it('refuses to overwrite an existing file unless asked, and then replaces it', async () => {
    const target = path.join(dir, 'kept.txt');
    await writeFile(target, 'original');
    const refused = await upload(s.url, admin, agent.id, target, Buffer.from('new'));
    expect(refused.status).toBe(409);
    expect(await readFile(target, 'utf8')).toBe('original');
    const replaced = await upload(s.url, admin, agent.id, target, Buffer.from('new'), { overwrite: true });
    expect(replaced.status).toBe(201);
    expect(await readFile(target, 'utf8')).toBe('new');
    expect(await partsIn(dir)).toEqual([]);
  });

  it('answers 413 for an upload over device_upload_max_bytes and changes nothing', async () => {
    const uploads = async () => (await s.db.db.selectFrom('device_sessions').select('id').where('kind', '=', 'upload').execute()).length;
    const before = await uploads();
    expect((await s.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: admin, payload: { device_upload_max_bytes: MiB } })).statusCode).toBe(200);
    try {
      const target = path.join(dir, 'too-big.bin');
      const put = await upload(s.url, admin, agent.id, target, randomBytes(MiB + 1));
      expect(put.status).toBe(413);
      expect(JSON.parse(put.body.toString())).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
      await expect(stat(target)).rejects.toThrow(/ENOENT/);
      expect(await partsIn(dir)).toEqual([]);
      expect(await uploads()).toBe(before);
    } finally {
      await s.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: admin, payload: { device_upload_max_bytes: 4 * 1024 ** 3 } });
    }
  });

  it('leaves nothing on the device when the client hangs up mid-upload, and records why', async () => {
    const target = path.join(dir, 'abandoned.bin');
    const url = `${s.url}/api/v1/agents/${agent.id}/files/content?${q({ path: target, sha256: sha(Buffer.alloc(8 * MiB)) })}`;
    const req = http.request(url, { method: 'PUT', headers: { ...admin, 'content-type': 'application/octet-stream', 'content-length': String(8 * MiB) } });
    req.on('error', () => undefined);
    req.write(Buffer.alloc(2 * MiB));
    // The temporary file exists while the upload runs …
    await vi.waitFor(async () => expect(await partsIn(dir)).toHaveLength(1), { timeout: 10_000 });
    req.destroy();
    // … and is gone once the server told the agent the client left.
    await vi.waitFor(async () => expect(await partsIn(dir)).toEqual([]), { timeout: 10_000 });
    await expect(stat(target)).rejects.toThrow(/ENOENT/);
    await vi.waitFor(async () => {
      const row = await s.db.db.selectFrom('device_sessions').selectAll().where('kind', '=', 'upload').orderBy('started_at', 'desc').executeTakeFirst();
      expect(row?.end_reason).toBe('client-gone');
    });
  });

  it('answers 411 for an upload without Content-Length', async () => {
    const url = `${s.url}/api/v1/agents/${agent.id}/files/content?${q({ path: path.join(dir, 'chunked.bin'), sha256: sha(Buffer.from('x')) })}`;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(url, { method: 'PUT', headers: { ...admin, 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end('x');
    });
    expect(answer.status).toBe(411);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'LENGTH_REQUIRED' });
    await expect(stat(path.join(dir, 'chunked.bin'))).rejects.toThrow(/ENOENT/);
  });
});

describe('directories', () => {
  it('pages a directory of 50,000 entries completely, sorted, with no duplicates', async () => {
    const big = path.join(dir, 'many');
    await mkdir(big);
    for (let i = 0; i < 50_000; i++) closeSync(openSync(path.join(big, `f${String(i).padStart(5, '0')}`), 'w'));
    const names: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await api('GET', `/files?${q({ path: big, limit: '2000', ...(cursor ? { cursor } : {}) })}`);
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json() as { entries: Array<{ name: string; type: string }>; next_cursor: string | null; total: number | null };
      expect(page.total).toBe(50_000);
      names.push(...page.entries.map((e) => e.name));
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(25);
    expect(names.length).toBe(50_000);
    expect(new Set(names).size).toBe(50_000);
    expect(names).toEqual([...names].sort());
  }, 120_000);

  it('makes, stats, renames and deletes, refusing a non-empty directory without recursive and an existing target', async () => {
    const made = path.join(dir, 'a', 'b', 'c');
    expect((await api('POST', '/files/mkdir', { path: made })).statusCode).toBe(201);
    expect((await stat(made)).isDirectory()).toBe(true);
    const st = await api('GET', `/files/stat?${q({ path: made })}`);
    expect(st.json()).toMatchObject({ path: made, name: 'c', type: 'dir' });
    expectError(await api('GET', `/files/stat?${q({ path: path.join(dir, 'nothing') })}`), 404, 'NOT_FOUND');

    await writeFile(path.join(dir, 'one.txt'), '1');
    await writeFile(path.join(dir, 'two.txt'), '2');
    expectError(await api('POST', '/files/rename', { from: path.join(dir, 'one.txt'), to: path.join(dir, 'two.txt') }), 409, 'CONFLICT');
    expect(await readFile(path.join(dir, 'two.txt'), 'utf8')).toBe('2');
    expect((await api('POST', '/files/rename', { from: path.join(dir, 'one.txt'), to: path.join(dir, 'two.txt'), overwrite: true })).statusCode).toBe(200);
    expect(await readFile(path.join(dir, 'two.txt'), 'utf8')).toBe('1');

    expectError(await api('DELETE', `/files?${q({ path: path.join(dir, 'a') })}`), 409, 'CONFLICT');
    expect((await stat(made)).isDirectory()).toBe(true);
    const deleted = await api('DELETE', `/files?${q({ path: path.join(dir, 'a'), recursive: 'true' })}`);
    expect(deleted.json()).toEqual({ path: path.join(dir, 'a'), deleted: true });
    await expect(stat(path.join(dir, 'a'))).rejects.toThrow(/ENOENT/);

    const audit = await s.app.inject({ method: 'GET', url: '/api/v1/audit?limit=50', headers: admin });
    const entries = audit.json() as Array<{ action: string; target: string | null; status_code: number }>;
    expect(entries.find((a) => a.action === 'device.file_delete' && a.status_code === 200)?.target).toBe(`agent pve-test: delete ${path.join(dir, 'a')}`);
  });
});

describe('hostile input', () => {
  it('refuses traversal, NUL bytes and relative paths at the agent with 400, touching nothing', async () => {
    // NUL never gets past the server's own input check; the agent refuses it as well, for other servers.
    expectError(await api('GET', `/files?${q({ path: `${dir}/a\0b` })}`), 400, 'VALIDATION_ERROR');
    const nul = await runCommand({ type: 'command', id: 'nul', command: 'fs_mkdir', params: { path: `${dir}/a\0b` } }, {} as CommandContext);
    expect(nul).toMatchObject({ success: false, error: expect.stringMatching(/^invalid path: it contains a NUL byte/) });
    for (const bad of ['/tmp/x/../../etc', 'etc/passwd', `${dir}/..`, `${dir}/sub/../../x`]) {
      const listed = expectError(await api('GET', `/files?${q({ path: bad })}`), 400, 'VALIDATION_ERROR');
      expect(String(listed.error)).toMatch(/invalid path/);
      expectError(await api('POST', '/files/mkdir', { path: `${bad}/made` }), 400, 'VALIDATION_ERROR');
      const got = await download(s.url, admin, agent.id, bad);
      expect(got.status).toBe(400);
    }
    const put = await upload(s.url, admin, agent.id, `${dir}/../escaped.bin`, Buffer.from('x'));
    expect(put.status).toBe(400);
    await expect(stat(path.join(path.dirname(dir), 'escaped.bin'))).rejects.toThrow(/ENOENT/);
  });

  it('refuses read users (403), users of another customer (404) and API keys unless device_api_keys is on', async () => {
    const target = path.join(dir, 'guarded.txt');
    await seedUser(s, 'reader', 'reader-password-1', { role: 'read' });
    const reader = bearer(await login(s.app, 'reader', 'reader-password-1'));
    const other = await createCustomer(s.app, admin.authorization!.slice(7), 'C-OTHER');
    await seedUser(s, 'other', 'other-password-1', { role: 'write', customer_ids: [other.id] });
    const outsider = bearer(await login(s.app, 'other', 'other-password-1'));
    const key = apiKey((await createKey(s.app, admin, 'write')).key);

    for (const [who, status] of [[reader, 403], [outsider, 404], [key, 403]] as const) {
      expect((await upload(s.url, who, agent.id, target, Buffer.from('x'))).status).toBe(status);
      expect((await api('POST', '/files/mkdir', { path: target }, who)).statusCode).toBe(status);
      const del = await api('DELETE', `/files?${q({ path: dir })}`, undefined, who);
      expect(del.statusCode, del.body).toBe(status);
      expect((await api('GET', `/files?${q({ path: dir })}`, undefined, who)).statusCode).toBe(status);
    }
    await expect(stat(target)).rejects.toThrow(/ENOENT/);

    expect((await s.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: admin, payload: { device_api_keys: true } })).statusCode).toBe(200);
    try {
      expect((await upload(s.url, key, agent.id, target, Buffer.from('by key'))).status).toBe(201);
      expect(await readFile(target, 'utf8')).toBe('by key');
    } finally {
      await s.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: admin, payload: { device_api_keys: false } });
    }
  });
});

describe('many at once', () => {
  it('runs 20 concurrent transfers on one agent while a heartbeat and an exec keep answering', async () => {
    const sources = Array.from({ length: 10 }, () => randomBytes(4 * MiB));
    await Promise.all(sources.map((data, i) => writeFile(path.join(dir, `down-${i}.bin`), data)));
    const uploads = Array.from({ length: 10 }, () => randomBytes(4 * MiB));
    const transfers = Promise.all([
      ...sources.map((_, i) => download(s.url, admin, agent.id, path.join(dir, `down-${i}.bin`))),
      ...uploads.map((data, i) => upload(s.url, admin, agent.id, path.join(dir, `up-${i}.bin`), data)),
    ]);
    const [heartbeat, exec] = await Promise.all([
      agent.agent.sendHeartbeat(),
      s.app.inject({ method: 'POST', url: `/api/v1/agents/${agent.id}/exec`, headers: admin, payload: { command: 'echo alive', timeout: 30 } }),
    ]);
    expect(heartbeat).toBe(true);
    expect(exec.statusCode, exec.body).toBe(200);
    expect((exec.json() as { stdout: string }).stdout).toContain('alive');
    const answers = await transfers;
    answers.slice(0, 10).forEach((a, i) => expect(a.sha256, `download ${i}`).toBe(sha(sources[i]!)));
    answers.slice(10).forEach((a, i) => expect(a.status, `upload ${i}`).toBe(201));
    for (const [i, data] of uploads.entries()) expect(sha(await readFile(path.join(dir, `up-${i}.bin`)))).toBe(sha(data));
  }, 120_000);
});
