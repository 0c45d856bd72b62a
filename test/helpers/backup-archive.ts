// The backup tests' tools: the CLI as a process, a JSON client of a spawned server, damage done to a
// backup file (bytes overwritten inside one part, or a part replaced with its checksums made to fit),
// and a fingerprint of a data place (every table's row count and md5, every file's SHA-256).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { open, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { expect } from 'vitest';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { ReferenceAgent } from '../../src/agent/reference-agent.js';
import { pgliteArtifacts } from '../../src/db/pglite-artifacts.js';
import { TEST_PGLITE_SETTINGS } from './db.js';
import { childEnv, nodeArgs, ROOT, type ProcessDataPlace, type ServerProcess } from './spawn-server.js';

/** Runs the CLI with `input` on standard input; resolves with its exit code and output. */
export function cli(args: string[], env: Record<string, string>, input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...nodeArgs('src/cli.ts'), ...args], { cwd: ROOT, env: childEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** A JSON client of a spawned server. */
export function client(server: ServerProcess) {
  const base = `http://127.0.0.1:${server.port}/api/v1`;
  return async (method: string, url: string, body?: unknown, token?: string) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { ...(body === undefined || Buffer.isBuffer(body) ? {} : { 'content-type': 'application/json' }), ...(Buffer.isBuffer(body) ? { 'content-type': 'application/octet-stream' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, json: () => JSON.parse(text) as Record<string, unknown> & Array<Record<string, unknown>> };
  };
}

export async function stop(server: ServerProcess): Promise<void> {
  server.kill('SIGTERM');
  expect(await server.exited).toBe(0);
}

/**
 * Gives the server behind `server` what a backup must carry: as the admin (password `password`), an
 * agent with three heartbeats of metrics and a configuration backup, and a firmware file (a blob).
 */
export async function populate(server: ServerProcess, options: { password: string; work: string; hostname: string; firmware: Buffer }) {
  const api = client(server);
  const { token } = (await api('POST', '/auth/login', { username: 'admin', password: options.password })).json() as unknown as { token: string };
  const { key } = (await api('POST', '/apikeys', { name: 'agents', permissions: 'agent' }, token)).json() as unknown as { key: string };
  const agent = new ReferenceAgent({ serverUrl: `http://127.0.0.1:${server.port}`, apiKey: key, stateFile: path.join(options.work, 'agent.json'), platform: 'freebsd', hostname: options.hostname, heartbeatIntervalMs: 3_600_000 });
  await agent.start();
  for (let i = 0; i < 3; i++) await agent.sendHeartbeat();
  const agentId = agent.agentId!;
  expect((await api('POST', `/agents/${agentId}/backup`, {}, token)).status).toBe(201);
  await agent.stop();
  expect((await api('POST', '/firmware/upload?version=2.0.0&platform=freebsd', options.firmware, token)).status).toBe(201);
  return { api, token, agentId };
}

/** Every entry of a ZIP file with its content. */
export async function zipEntries(file: string): Promise<Map<string, Buffer>> {
  const zip = await yauzl.openPromise(file, { lazyEntries: true });
  const entries = new Map<string, Buffer>();
  try {
    for await (const entry of zip.eachEntry()) entries.set(entry.fileName, await buffer(await zip.openReadStreamPromise(entry)));
  } finally {
    zip.close();
  }
  return entries;
}

/** Overwrites `count` bytes (each inverted) in the middle of `entry`'s stored data, in place. */
export async function overwriteInside(file: string, entry: string, count = 4): Promise<void> {
  const zip = await yauzl.openPromise(file, { lazyEntries: true });
  let found: yauzl.Entry | undefined;
  try {
    for await (const e of zip.eachEntry()) if (e.fileName === entry) found = e;
  } finally {
    zip.close();
  }
  if (!found) throw new Error(`${file} holds no ${entry}`);
  const handle = await open(file, 'r+');
  try {
    const header = Buffer.alloc(30);
    await handle.read(header, 0, 30, found.relativeOffsetOfLocalHeader);
    const data = found.relativeOffsetOfLocalHeader + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
    const at = data + Math.floor(found.compressedSize / 2);
    const bytes = Buffer.alloc(count);
    await handle.read(bytes, 0, count, at);
    await handle.write(bytes.map((b) => b ^ 0xff), 0, count, at);
  } finally {
    await handle.close();
  }
}

/**
 * Writes `out`: the backup `file` with `entry` replaced by `change(content)` and a manifest whose
 * checksums fit the new content, as a backup that is broken yet consistent would be (secrets in clear:
 * sealed ones bind the manifest). `version1`: the manifest of a backup made before checksums. `stored`:
 * every entry stored without compression (content and manifest unchanged), so that bytes overwritten
 * inside an entry reach whatever reads it, as they do when they hit a deflate stream's stored block.
 */
export async function rewrite(file: string, out: string, options: { entry?: string; change?: (content: Buffer) => Buffer; version1?: boolean; stored?: boolean }): Promise<void> {
  const entries = await zipEntries(file);
  const { entry, change } = options;
  if (entry && change) entries.set(entry, change(entries.get(entry)!));
  if ((entry && change) || options.version1) {
    const manifest = JSON.parse(entries.get('manifest.json')!.toString('utf8')) as { version: number; parts?: Record<string, { sha256: string; size: number }> };
    if (options.version1) {
      manifest.version = 1;
      delete manifest.parts;
    } else if (manifest.parts && entry) {
      manifest.parts[entry] = { sha256: createHash('sha256').update(entries.get(entry)!).digest('hex'), size: entries.get(entry)!.length };
    }
    entries.set('manifest.json', Buffer.from(JSON.stringify(manifest)));
  }
  const zip = new yazl.ZipFile();
  for (const [name, content] of entries) zip.addBuffer(content, name, { compress: !options.stored });
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(out));
}

/** The parts of a backup's database, largest first (the bulk of a dump, or of the metrics). */
export async function largestParts(file: string, prefix: string): Promise<string[]> {
  const entries = await zipEntries(file);
  return [...entries].filter(([name]) => name.startsWith(prefix)).sort((a, b) => b[1].length - a[1].length).map(([name]) => name);
}

const TABLE_FINGERPRINT = (table: string) => `select count(*)::int as n, coalesce(md5(string_agg(t::text, ',' order by t::text)), '') as md5 from "${table}" t`;
const TABLES = "select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name";

/**
 * What a user of the place would notice changed: every table with its row count and an md5 of its rows,
 * and every file of DATA_DIR with its SHA-256 (the embedded database's files aside: opening it writes them).
 */
export async function fingerprint(place: ProcessDataPlace): Promise<{ tables: Record<string, string>; files: Record<string, string> }> {
  const tables: Record<string, string> = {};
  const query = await openDatabase(place);
  try {
    for (const { name } of await query<{ name: string }>(TABLES)) {
      const [row] = await query<{ n: number; md5: string }>(TABLE_FINGERPRINT(name));
      tables[name] = `${row!.n} rows, md5 ${row!.md5}`;
    }
  } finally {
    await query.close();
  }
  const files: Record<string, string> = {};
  const listed = await readdir(place.dataDir, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const e of listed) {
    const name = path.relative(place.dataDir, path.join(e.parentPath, e.name));
    if (name.startsWith(`pglite${path.sep}`) || name === 'server.lock') continue;
    files[name] = e.isFile() ? createHash('sha256').update(await readFile(path.join(place.dataDir, name))).digest('hex') : 'directory';
  }
  return { tables, files };
}

type Query = (<Row>(text: string) => Promise<Row[]>) & { close(): Promise<void> };

async function openDatabase(place: ProcessDataPlace): Promise<Query> {
  if (place.env.DATABASE_URL) {
    const db = new pg.Client({ connectionString: place.env.DATABASE_URL });
    await db.connect();
    return Object.assign(async <Row>(text: string) => (await db.query(text)).rows as Row[], { close: () => db.end() });
  }
  const dir = path.join(place.dataDir, 'pglite');
  if ((await readdir(dir).catch(() => [])).length === 0) return Object.assign(async <Row>() => [] as Row[], { close: async () => undefined });
  const db = await PGlite.create({ ...(await pgliteArtifacts()), dataDir: dir, startParams: [...PGlite.defaultStartParams, ...TEST_PGLITE_SETTINGS] });
  return Object.assign(async <Row>(text: string) => (await db.query<Row>(text)).rows, { close: () => db.close() });
}
