// Firmware sizes (contract §9, issue 10 acceptance 5): a body over FIRMWARE_MAX_BYTES is refused with 413
// and leaves nothing; a 200 MiB firmware goes up and comes down streamed, the server's memory growing by
// far less than the file (measured as resident memory of this process, which runs the server; the client
// side is plain node:http holding one chunk at a time).
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';

const MiB = 1024 * 1024;

/** `total` bytes of a repeating pseudo-random pattern, produced as read (never held whole). */
function patternStream(total: number): { stream: Readable; sha256: () => string } {
  const block = Buffer.alloc(MiB);
  for (let i = 0; i < block.length; i++) block[i] = (i * 2654435761) >>> 24;
  const hash = createHash('sha256');
  let sent = 0;
  const stream = new Readable({
    read() {
      if (sent >= total) return void this.push(null);
      const chunk = block.subarray(0, Math.min(MiB, total - sent));
      sent += chunk.length;
      hash.update(chunk);
      this.push(chunk);
    },
  });
  let digest: string | undefined;
  return { stream, sha256: () => (digest ??= hash.digest('hex')) };
}

const uploadStream = (s: LiveServer, key: string, query: string, body: Readable) =>
  fetch(`${s.url}/api/v1/firmware/upload?${query}`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/octet-stream' },
    body: Readable.toWeb(body) as ReadableStream,
    duplex: 'half',
  } as RequestInit);

describe('FIRMWARE_MAX_BYTES', () => {
  let s: LiveServer;
  let key: string;
  beforeAll(async () => {
    s = await startLiveServer({ env: { FIRMWARE_MAX_BYTES: String(MiB) } });
    key = (await createKey(s.app, bearer(await adminToken(s)), 'write')).key;
  });
  afterAll(() => s?.close());

  it('refuses a larger body with 413, whether it says its length or not, and keeps nothing', async () => {
    const declared = await fetch(`${s.url}/api/v1/firmware/upload?version=1.0.0&platform=linux`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/octet-stream' },
      body: Buffer.alloc(MiB + 1),
    });
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { code: string }).code).toBe('PAYLOAD_TOO_LARGE');
    const streamed = await uploadStream(s, key, 'version=1.0.1&platform=linux', patternStream(3 * MiB).stream).catch(() => undefined);
    if (streamed) expect(streamed.status).toBe(413); // the server may also cut the connection first
    const blobs = await readdir(path.join(s.config.dataDir, 'blobs')).catch(() => []);
    expect(blobs).toEqual([]);
    const listed = await fetch(`${s.url}/api/v1/firmware`, { headers: { 'x-api-key': key } });
    expect(await listed.json()).toEqual([]);
  });
});

describe('a 200 MiB firmware', () => {
  let s: LiveServer;
  let key: string;
  beforeAll(async () => {
    s = await startLiveServer({});
    key = (await createKey(s.app, bearer(await adminToken(s)), 'write')).key;
  });
  afterAll(() => s?.close());

  /** A plain node:http exchange: the client side holds nothing but the chunk in flight. */
  function exchange(method: string, url: string, body?: Readable): Promise<{ status: number; sha256: string; size: number }> {
    return new Promise((resolve, reject) => {
      const req = http.request(`${s.url}${url}`, { method, headers: { 'x-api-key': key, 'content-type': 'application/octet-stream' } }, (res) => {
        const hash = createHash('sha256');
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          hash.update(chunk);
          size += chunk.length;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, sha256: hash.digest('hex'), size }));
      });
      req.on('error', reject);
      if (body) body.pipe(req);
      else req.end();
    });
  }

  it('is uploaded and downloaded streamed: the process running the server grows by less than 64 MiB', async () => {
    const size = 200 * MiB;
    const source = patternStream(size);
    let peak = 0;
    const baseline = process.memoryUsage().rss;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss - baseline)), 20);
    try {
      const uploaded = await exchange('POST', '/api/v1/firmware/upload?version=7.0.0&platform=windows', source.stream);
      expect(uploaded.status).toBe(201);
      const downloaded = await exchange('GET', '/api/v1/firmware/download?platform=windows');
      expect(downloaded).toEqual({ status: 200, sha256: source.sha256(), size });
    } finally {
      clearInterval(sampler);
    }
    expect(peak).toBeLessThan(64 * MiB);
  }, 120_000);
});
