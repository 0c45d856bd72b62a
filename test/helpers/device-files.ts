// Device files over real HTTP (issue 59): uploads with a declared length and downloads hashed as they
// stream, against a live server whose reference agent reads and writes real files.
import { createHash } from 'node:crypto';
import http from 'node:http';
import { expect, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';

export const MiB = 1024 * 1024;
export const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body's bytes (downloads keep only the hash and length unless `keep`). */
  body: Buffer;
  bytes: number;
  sha256: string;
}

const contentUrl = (base: string, agentId: string, query: Record<string, string>) =>
  `${base}/api/v1/agents/${agentId}/files/content?${new URLSearchParams(query).toString()}`;

/** PUT …/files/content with Content-Length; `data` goes out in 1 MiB writes that honour backpressure. */
export function upload(base: string, headers: Record<string, string>, agentId: string, path: string, data: Buffer, options: { sha256?: string; overwrite?: boolean } = {}): Promise<HttpAnswer> {
  const url = contentUrl(base, agentId, { path, sha256: options.sha256 ?? sha(data), ...(options.overwrite ? { overwrite: 'true' } : {}) });
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'PUT', headers: { ...headers, 'content-type': 'application/octet-stream', 'content-length': String(data.length) } }, (res) => collect(res, true).then(resolve, reject));
    req.on('error', reject);
    let offset = 0;
    const pump = () => {
      while (offset < data.length) {
        const chunk = data.subarray(offset, offset + MiB);
        offset += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

/** GET …/files/content, hashing the body as it streams (`keep` also keeps the bytes). */
export function download(base: string, headers: Record<string, string>, agentId: string, path: string, options: { range?: string; keep?: boolean } = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.get(contentUrl(base, agentId, { path }), { headers: { ...headers, ...(options.range ? { range: options.range } : {}) } }, (res) => collect(res, options.keep ?? false).then(resolve, reject));
    req.on('error', reject);
  });
}

function collect(res: http.IncomingMessage, keep: boolean): Promise<HttpAnswer> {
  const hash = createHash('sha256');
  const chunks: Buffer[] = [];
  let bytes = 0;
  return new Promise((resolve, reject) => {
    res.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      bytes += chunk.length;
      if (keep || res.statusCode !== 200 && res.statusCode !== 206) chunks.push(chunk);
    });
    res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), bytes, sha256: hash.digest('hex') }));
    res.on('error', reject);
  });
}

/** Waits until the agent's announced capabilities (its hello frame) are stored and include `files`. */
export async function waitForFiles(app: FastifyInstance, headers: Record<string, string>, agentId: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const res = await app.inject({ method: 'GET', url: `/api/v1/agents/${agentId}`, headers });
      expect((res.json() as { capabilities?: string[] }).capabilities).toContain('files');
    },
    { timeout: 10_000 },
  );
}
