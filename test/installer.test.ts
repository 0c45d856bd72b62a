// Installer packages (contract §9): a real ZIP goes in, the download is that ZIP plus rmm-agent.json with
// the server settings; anything that is not a safe ZIP is refused and leaves nothing behind.
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { apiSocketUrl } from '../src/agent/server-api.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';
import { startLiveServer } from './helpers/live-agent.js';

type ZipSpec = Array<[name: string, data: string | Buffer | null, options?: { mode?: number; compress?: boolean }]>;

/** A ZIP made by yazl; `null` data is a folder entry. */
async function makeZip(entries: ZipSpec): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, data, options] of entries) {
    if (data === null) zip.addEmptyDirectory(name);
    else zip.addBuffer(Buffer.from(data), name, options);
  }
  zip.end();
  return buffer(zip.outputStream as Readable);
}

/** A ZIP written byte by byte, for names yazl refuses to write: one stored entry "x" per name. */
function rawZip(names: string[]): Buffer {
  const u16 = (v: number) => Buffer.from([v & 0xff, v >> 8]);
  const u32 = (v: number) => Buffer.from(new Uint32Array([v]).buffer);
  const [data, crc, utf8Names] = [Buffer.from('x'), crc32('x'), 0x800];
  const parts: Buffer[] = [];
  const directory: Buffer[] = [];
  let offset = 0;
  for (const name of names) {
    const nameBytes = Buffer.from(name, 'utf8');
    // version, flags, method (stored), time, date, crc, sizes, name length, extra length
    const common = [u16(20), u16(utf8Names), u16(0), u16(0), u16(0), u32(crc), u32(1), u32(1), u16(nameBytes.length), u16(0)];
    const local = Buffer.concat([u32(0x04034b50), ...common, nameBytes, data]);
    // version made by, the common part, comment length, disk, internal and external attributes, offset
    directory.push(Buffer.concat([u32(0x02014b50), u16(20), ...common, u16(0), u16(0), u16(0), u32(0), u32(offset), nameBytes]));
    parts.push(local);
    offset += local.length;
  }
  const central = Buffer.concat(directory);
  const end = Buffer.concat([u32(0x06054b50), u16(0), u16(0), u16(names.length), u16(names.length), u32(central.length), u32(offset), u16(0)]);
  return Buffer.concat([...parts, central, end]);
}

/** Every entry of a ZIP by name (folders as empty buffers); fails on a name seen twice. */
async function readZip(body: Buffer): Promise<Map<string, Buffer>> {
  const zip = await yauzl.fromBufferPromise(body, { lazyEntries: true });
  const files = new Map<string, Buffer>();
  for await (const entry of zip.eachEntry()) {
    expect(files.has(entry.fileName), `${entry.fileName} appears once`).toBe(false);
    files.set(entry.fileName, entry.fileName.endsWith('/') ? Buffer.alloc(0) : await buffer(await zip.openReadStreamPromise(entry)));
  }
  return files;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const random = (size: number) => Buffer.from(Array.from({ length: size }, (_, i) => (i * 7919 + (i >> 8)) & 0xff));

let t: TestApp;
let dataDir: string;
let admin: Record<string, string>;
let agentKey: string;
let readKey: string;
beforeAll(async () => {
  t = await buildTestApp({ captureLogs: true });
  dataDir = t.config.dataDir; // the helper's own directory, removed with the file
  admin = bearer(await adminToken(t));
  agentKey = (await createKey(t.app, admin, 'agent')).key;
  readKey = (await createKey(t.app, admin, 'read')).key;
});
afterAll(() => t.close());

const upload = (body: Buffer | Readable, { platform = 'windows', headers = admin, type = 'application/zip' } = {}) =>
  t.app.inject({ method: 'POST', url: `/api/v1/installer/upload?platform=${platform}`, headers: { ...headers, 'content-type': type }, payload: body });
const download = (headers = apiKey(agentKey), platform = 'windows', method: 'GET' | 'HEAD' = 'GET') =>
  t.app.inject({ method, url: `/api/v1/installer/download?platform=${platform}`, headers });
const blobFiles = () => readdir(path.join(dataDir, 'blobs')).catch(() => [] as string[]);
const storedRows = () => t.db.db.selectFrom('installers').selectAll().execute();
const putSettings = async (payload: Record<string, string | null>) => {
  const res = await t.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: admin, payload });
  expect(res.statusCode, res.body).toBe(200);
};

/** Uploads `body`, expects the refusal, and checks that neither the row nor the blob store changed. */
async function expectRefused(body: Buffer, status: number, code: string, message?: RegExp) {
  const [rowsBefore, blobsBefore] = [await storedRows(), await blobFiles()];
  const error = expectError(await upload(body), status, code);
  if (message) expect(error.error).toMatch(message);
  expect(await storedRows()).toEqual(rowsBefore);
  expect((await blobFiles()).sort()).toEqual(blobsBefore.sort());
}

const PACKAGE: ZipSpec = [
  ['setup.exe', random(200_000)],
  ['README.txt', 'Run setup.exe as administrator.\r\n'],
  ['config/', null],
  ['config/defaults.ini', '[agent]\ninterval=60\n', { compress: false }],
];

describe('installer package', () => {
  it('is 404 before one is uploaded', async () => {
    expectError(await download(), 404, 'NOT_FOUND');
    expect((await download(apiKey(agentKey), 'windows', 'HEAD')).statusCode).toBe(404);
  });

  it('has only the windows platform', async () => {
    expectError(await upload(await makeZip(PACKAGE), { platform: 'linux' }), 400, 'VALIDATION_ERROR');
    expectError(await download(apiKey(agentKey), 'linux'), 400, 'VALIDATION_ERROR');
    const noPlatform = await t.app.inject({ method: 'POST', url: '/api/v1/installer/upload', headers: { ...admin, 'content-type': 'application/zip' }, payload: rawZip(['a']) });
    expectError(noPlatform, 400, 'VALIDATION_ERROR');
  });

  it('refuses a body that is not a ZIP, or a damaged one, and keeps nothing', async () => {
    await expectRefused(Buffer.from('MZ this is an executable, not an archive'), 400, 'VALIDATION_ERROR', /not a ZIP/);
    const stored = await makeZip([['data.bin', random(5000), { compress: false }]]);
    stored[100] = stored[100]! ^ 0xff; // inside the data of the only entry
    await expectRefused(stored, 400, 'VALIDATION_ERROR', /damaged/);
    await expectRefused(await makeZip([]), 400, 'VALIDATION_ERROR', /no files/);
  });

  it('refuses entry names that could be extracted outside the target folder (zip-slip)', async () => {
    for (const name of ['../evil.txt', '/etc/passwd', 'C:\\x', 'a\\..\\b', 'a/../../b', 'ok/.. /x', 'c:x', 'file.txt:stream']) {
      await expectRefused(rawZip(['fine.txt', name]), 400, 'VALIDATION_ERROR', /outside its folder/);
    }
    // The same after Unicode compatibility normalisation (NFKC), and the look-alikes Windows' best-fit
    // code page conversion turns into separators: fullwidth dots, solidus and reverse solidus, colon.
    const lookAlikes = ['．．／evil.txt', 'a／．．／．．／b', '．．＼x', '＼x', 'ｃ：x', 'ok/．．/x', 'a∕..∕b', '..⁄x', '﹨x', 'a¥..¥b'];
    for (const name of lookAlikes) {
      await expectRefused(rawZip(['fine.txt', name]), 400, 'VALIDATION_ERROR', /outside its folder/);
    }
    expect((await upload(rawZip(['fine.txt', 'sub/ok.txt']))).statusCode).toBe(201);
  });

  it('refuses names Windows reserves or changes: device names, trailing dots and spaces, forbidden characters', async () => {
    const reserved = ['CON', 'con.txt', 'sub/Nul.tar.gz', 'LPT1/readme.txt', 'com9.log', 'aux', 'PRN', 'COM¹', 'ｃｏｎ', 'conin$', 'CONOUT$.txt', 'NUL .txt', 'COM0'];
    for (const name of reserved) {
      await expectRefused(rawZip(['fine.txt', name]), 400, 'VALIDATION_ERROR', /reserved Windows device name/);
    }
    for (const name of ['file.txt.', 'file.txt ', 'dir./x', 'dir /x']) {
      await expectRefused(rawZip(['fine.txt', name]), 400, 'VALIDATION_ERROR', /ends with a dot or a space/);
    }
    for (const name of ['a<b', 'a>b', 'a"b', 'a|b', 'a?b', 'a*b']) {
      await expectRefused(rawZip(['fine.txt', name]), 400, 'VALIDATION_ERROR', /not allowed in Windows file names/);
    }
    // Two names that normalise to one would overwrite each other.
    await expectRefused(rawZip(['Ａ.txt', 'a.txt']), 400, 'VALIDATION_ERROR', /twice/);
    // Names that only look like them are fine.
    expect((await upload(rawZip(['console.txt', 'CONFIG/nul-test.txt', 'COM10', 'auxiliary.dll', 'LPT/x', '.hidden', 'a..b', 'Ünïcödé ß.txt']))).statusCode).toBe(201);
  });

  it('refuses links, duplicate names, too many entries and a folder named rmm-agent.json', async () => {
    await expectRefused(await makeZip([['link', '/etc', { mode: 0o120777 }]]), 400, 'VALIDATION_ERROR', /symbolic link/);
    await expectRefused(await makeZip([['Setup.exe', 'a'], ['setup.EXE', 'b']]), 400, 'VALIDATION_ERROR', /twice/);
    await expectRefused(await makeZip([['rmm-agent.json/x', 'a']]), 400, 'VALIDATION_ERROR', /rmm-agent\.json/);
    await expectRefused(rawZip(Array.from({ length: 10_001 }, (_, i) => `f${i}`)), 400, 'VALIDATION_ERROR', /10001 entries/);
  });

  it('may be uploaded only with write permission; other content types are 415', async () => {
    const zip = await makeZip(PACKAGE);
    expectError(await upload(zip, { headers: apiKey(readKey) }), 403, 'FORBIDDEN');
    expectError(await upload(zip, { headers: apiKey(agentKey) }), 403, 'FORBIDDEN');
    expectError(await upload(zip, { type: 'application/x-tar' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('stores a real ZIP and returns its hash and size', async () => {
    const zip = await makeZip(PACKAGE);
    const res = await upload(zip);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({ platform: 'windows', sha256: sha256(zip), size: zip.length, created_at: expect.any(String) });
    expect(await storedRows()).toEqual([expect.objectContaining({ platform: 'windows', sha256: sha256(zip), size: zip.length })]);
    expect(await blobFiles()).toEqual([sha256(zip)]); // the earlier package was removed
  });

  it('without settings downloads exactly the uploaded files', async () => {
    const res = await download();
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toBe('attachment; filename="rmm-agent-installer-windows.zip"');
    const files = await readZip(res.rawPayload);
    expect([...files.keys()].sort()).toEqual(PACKAGE.map(([name]) => name).sort());
    for (const [name, data] of PACKAGE) expect(files.get(name)!.equals(Buffer.from(data ?? '')), name).toBe(true);
    const head = await download(apiKey(agentKey), 'windows', 'HEAD');
    expect([head.statusCode, head.headers['content-type'], head.rawPayload.length]).toEqual([200, 'application/zip', 0]);
  });

  it('adds rmm-agent.json with the settings that are set, for agent and read keys', async () => {
    const installerKey = (await createKey(t.app, admin, 'agent')).key;
    await putSettings({ backend_url: 'https://rmm.example.com', ws_url: 'wss://rmm.example.com/api/v1/agent/ws', installer_api_key: installerKey });
    for (const headers of [apiKey(agentKey), apiKey(readKey)]) {
      const files = await readZip((await download(headers)).rawPayload);
      expect([...files.keys()].sort()).toEqual([...PACKAGE.map(([name]) => name), 'rmm-agent.json'].sort());
      expect(JSON.parse(files.get('rmm-agent.json')!.toString('utf8'))).toEqual({
        server_url: 'https://rmm.example.com',
        ws_url: 'wss://rmm.example.com/api/v1/agent/ws',
        api_key: installerKey,
      });
    }
    await putSettings({ installer_api_key: null, backend_url: null });
    const files = await readZip((await download()).rawPayload);
    expect(JSON.parse(files.get('rmm-agent.json')!.toString('utf8'))).toEqual({ ws_url: 'wss://rmm.example.com/api/v1/agent/ws' });
  });

  it('derives ws_url from backend_url when the ws_url setting is unset, as the agent itself does', async () => {
    const configOf = async () => JSON.parse((await readZip((await download()).rawPayload)).get('rmm-agent.json')!.toString('utf8')) as Record<string, string>;
    for (const [backend, ws] of <Array<[string, string]>>[
      ['https://rmm.example.com', 'wss://rmm.example.com/api/v1/agent/ws'],
      ['https://rmm.example.com:8443/rmm/', 'wss://rmm.example.com:8443/rmm/api/v1/agent/ws'],
      ['http://10.0.0.5:8080/rmm', 'ws://10.0.0.5:8080/rmm/api/v1/agent/ws'],
    ]) {
      await putSettings({ backend_url: backend, ws_url: null });
      expect(await configOf(), backend).toEqual({ server_url: backend, ws_url: ws });
      expect(apiSocketUrl(backend, 'agent/ws').toString()).toBe(ws); // where the reference agent connects
    }
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/settings', headers: admin })).json()).toMatchObject({ ws_url: null });
    // A ws_url that is set wins; the settings themselves show only what was set.
    await putSettings({ ws_url: 'wss://ws.example.com/api/v1/agent/ws' });
    expect((await configOf()).ws_url).toBe('wss://ws.example.com/api/v1/agent/ws');
    await putSettings({ backend_url: null, ws_url: 'wss://rmm.example.com/api/v1/agent/ws' });
  });

  it('replaces an uploaded rmm-agent.json instead of adding a second one', async () => {
    const previous = (await storedRows())[0]!.sha256;
    const zip = await makeZip([...PACKAGE, ['RMM-Agent.json', '{"api_key":"stale"}'], ['config/rmm-agent.json', 'kept']]);
    expect((await upload(zip)).statusCode).toBe(201);
    expect(await blobFiles()).toEqual([sha256(zip)]);
    expect(await blobFiles()).not.toContain(previous);
    const files = await readZip((await download()).rawPayload);
    expect([...files.keys()].filter((name) => name.toLowerCase() === 'rmm-agent.json')).toEqual(['rmm-agent.json']);
    expect(JSON.parse(files.get('rmm-agent.json')!.toString('utf8'))).toEqual({ ws_url: 'wss://rmm.example.com/api/v1/agent/ws' });
    expect(files.get('config/rmm-agent.json')!.toString()).toBe('kept');
    // The same bytes again: the row is replaced, the blob stays.
    expect((await upload(zip)).statusCode).toBe(201);
    expect(await blobFiles()).toEqual([sha256(zip)]);
  });

  it('shows the installer key only inside rmm-agent.json, never in the audit log or the logs', async () => {
    const installerKey = (await createKey(t.app, admin, 'agent')).key;
    await putSettings({ installer_api_key: installerKey });
    expect((await upload(await makeZip(PACKAGE))).statusCode).toBe(201);
    const res = await download(apiKey(agentKey));
    expect(res.rawPayload.includes(installerKey)).toBe(false); // rmm-agent.json is deflated
    expect(JSON.stringify(res.headers)).not.toContain(installerKey);
    const files = await readZip(res.rawPayload);
    for (const [name, data] of files) expect(data.includes(installerKey), name).toBe(name === 'rmm-agent.json');
    const audit = await t.app.inject({ method: 'GET', url: '/api/v1/audit?action=installer.upload', headers: admin });
    expect(audit.statusCode).toBe(200);
    expect(audit.body).toContain('installer.upload');
    expect(audit.body).not.toContain(installerKey);
    expect(t.logs().join('\n')).not.toContain(installerKey);
  });

  it('accepts the other ZIP content types', async () => {
    for (const type of ['application/x-zip-compressed', 'application/octet-stream']) {
      expect((await upload(await makeZip([['a.txt', type]]), { type })).statusCode, type).toBe(201);
    }
  });
});

describe('installer package size limit', () => {
  const LIMIT = 65_536;
  const url = '/api/v1/installer/upload?platform=windows';

  it('is 413 at once when content-length is past FIRMWARE_MAX_BYTES', async () => {
    const small = await buildTestApp({ env: { FIRMWARE_MAX_BYTES: String(LIMIT) } });
    try {
      const headers = { ...bearer(await adminToken(small)), 'content-type': 'application/zip' };
      const zip = await makeZip([['big.bin', random(100_000), { compress: false }]]);
      const res = await small.app.inject({ method: 'POST', url, headers, payload: zip });
      expectError(res, 413, 'PAYLOAD_TOO_LARGE');
      expect(res.headers.connection).toBe('close');
      const fitting = await makeZip([['small.bin', random(30_000), { compress: false }]]);
      expect((await small.app.inject({ method: 'POST', url, headers, payload: fitting })).statusCode).toBe(201);
    } finally {
      await small.close();
    }
  });

  it('cuts off a chunked upload at the limit, keeps nothing, and leaves no connection hanging', async () => {
    const live = await startLiveServer({ env: { FIRMWARE_MAX_BYTES: String(LIMIT) } });
    const headers = { ...bearer(await adminToken(live)), 'content-type': 'application/zip', 'transfer-encoding': 'chunked' };
    const outcome = await new Promise<string>((resolve) => {
      const req = http.request(`${live.url}${url}`, { method: 'POST', headers }, (res) => {
        void buffer(res).then((body) => resolve(`${res.statusCode} ${JSON.parse(body.toString()).code}`));
      });
      // Writing on after the answer may meet the closed socket; the answer itself is what we check.
      req.on('error', (err: NodeJS.ErrnoException) => setTimeout(() => resolve(err.code ?? 'error'), 500));
      let sent = 0;
      const writeNext = () => {
        if (req.destroyed || sent >= 40) return void req.end();
        sent++;
        req.write(Buffer.alloc(16_384, sent), () => setTimeout(writeNext, 5));
      };
      writeNext();
    });
    // The server answers as soon as the count passes the limit; a client still writing can see its socket
    // closed under it (EPIPE, ECONNRESET) before it reads the answer.
    expect(['413 PAYLOAD_TOO_LARGE', 'EPIPE', 'ECONNRESET']).toContain(outcome);
    expect(await live.db.db.selectFrom('installers').selectAll().execute()).toEqual([]);
    await live.close(); // hangs (test timeout) if the half-read request kept its connection open
  });
});

describe('installer package over a real socket', () => {
  it('streams a larger package in and out unchanged', async () => {
    const live = await startLiveServer();
    try {
      const headers = bearer(await adminToken(live));
      const spec: ZipSpec = [['bin/agent.exe', random(3_000_000)], ['bin/lib.dll', random(1_500_000), { compress: false }], ['notes.txt', 'x'.repeat(100_000)]];
      const zip = await makeZip(spec);
      const chunks = Array.from({ length: Math.ceil(zip.length / 65536) }, (_, i) => zip.subarray(i * 65536, (i + 1) * 65536));
      const up = await fetch(`${live.url}/api/v1/installer/upload?platform=windows`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/zip' },
        body: Readable.toWeb(Readable.from(chunks)) as ReadableStream,
        duplex: 'half',
      } as RequestInit);
      expect(up.status, await up.clone().text()).toBe(201);
      const key = (await createKey(live.app, headers, 'agent')).key;
      const down = await fetch(`${live.url}/api/v1/installer/download?platform=windows`, { headers: apiKey(key) });
      expect(down.status).toBe(200);
      const body = Buffer.from(await down.arrayBuffer());
      expect(Number(down.headers.get('content-length'))).toBe(body.length);
      const files = await readZip(body);
      expect([...files.keys()].sort()).toEqual(spec.map(([name]) => name).sort());
      for (const [name, data] of spec) expect(files.get(name)!.equals(Buffer.from(data ?? '')), name).toBe(true);
    } finally {
      await live.close();
    }
  });
});
