// A 2 GiB download through the agent (issue 59) keeps the server's memory flat: the server runs as its
// own process, a reference agent serves a sparse 2 GiB file, and the client reads the whole stream while
// the server's resident memory (VmRSS from /proc) is sampled. Backpressure end to end is what keeps it
// under 64 MiB of growth; buffering the file would take 2 GiB.
import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { ReferenceAgent } from '../src/agent/reference-agent.js';
import { MiB } from './helpers/device-files.js';
import { createProcessDataPlace, PROCESS_TEST_TIMEOUT_MS, type ProcessDataPlace } from './helpers/spawn-server.js';
import { startWatchedServer, type WatchedServer } from './helpers/watched-server.js';

const ADMIN_PASSWORD = 'files-memory-password';
const GiB = 1024 * MiB;
let place: ProcessDataPlace;
let server: WatchedServer;
let agent: ReferenceAgent;
let dir: string;
let admin: Record<string, string>;

async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

/** Reads the whole download, counting bytes; resolves with the status and the count. */
function drain(url: string, headers: Record<string, string>): Promise<{ status: number; bytes: number; length: string | undefined }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, length: res.headers['content-length'] }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

beforeAll(async () => {
  place = await createProcessDataPlace();
  server = await startWatchedServer({ ...place.env, ADMIN_PASSWORD });
  const { token } = await server.api<{ token: string }>('POST', '/auth/login', {}, { username: 'admin', password: ADMIN_PASSWORD });
  admin = { authorization: `Bearer ${token}` };
  const { key } = await server.api<{ key: string }>('POST', '/apikeys', admin, { name: 'files memory', permissions: 'agent' });
  dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-files-mem-'));
  agent = new ReferenceAgent({
    serverUrl: server.base,
    apiKey: key,
    stateFile: path.join(dir, 'state.json'),
    platform: 'linux',
    hostname: 'files-memory',
    heartbeatIntervalMs: 3_600_000,
    collectSystem: () => ({ cpu: { usage_percent: 1 } }),
  });
  await agent.start();
  await vi.waitFor(() => expect(agent.connected).toBe(true), { timeout: 30_000 });
  await server.until('the agent announced files', async () => {
    const found = await server.api<{ capabilities: string[] }>('GET', `/agents/${agent.agentId}`, admin);
    return found.capabilities.includes('files');
  });
}, PROCESS_TEST_TIMEOUT_MS);

afterAll(async () => {
  await agent?.stop();
  await server?.kill();
  await place?.cleanup();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('downloads a 2 GiB file through the API with the server\'s RSS growing less than 64 MiB', async () => {
  const file = path.join(dir, 'sparse.bin');
  // Sparse: 2 GiB long without 2 GiB of disk.
  await writeFile(file, '');
  await truncate(file, 2 * GiB);
  const url = (p: string) => `${server.base}/api/v1/agents/${agent.agentId}/files/content?${new URLSearchParams({ path: p }).toString()}`;

  // Warm up (code paths compiled, buffers allocated) with 64 MiB, then take the baseline.
  const small = path.join(dir, 'warm.bin');
  await writeFile(small, '');
  await truncate(small, 64 * MiB);
  expect((await drain(url(small), admin)).bytes).toBe(64 * MiB);
  const baseline = await rssOf(server.process.pid);

  let peak = baseline;
  const sampler = setInterval(() => void rssOf(server.process.pid).then((rss) => (peak = Math.max(peak, rss)), () => undefined), 50);
  try {
    const got = await drain(url(file), admin);
    expect(got.status).toBe(200);
    expect(got.length).toBe(String(2 * GiB));
    expect(got.bytes).toBe(2 * GiB);
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, await rssOf(server.process.pid));
  expect(peak - baseline, `RSS grew from ${baseline} to ${peak} bytes`).toBeLessThan(64 * MiB);
}, 600_000);
