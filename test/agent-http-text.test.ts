// The reference agent's HTTP client (src/agent/http-text.ts) against small real servers: what an agent's
// log says when the server is down, silent or misbehaving, and that a stopping agent cancels at once.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_ANSWER_CHARS, requestText } from '../src/agent/http-text.js';

const servers: http.Server[] = [];

async function serve(handler: http.RequestListener): Promise<URL> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/agent/heartbeat`);
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const post = (url: URL, options: { signal?: AbortSignal; timeoutMs?: number; body?: string } = {}) =>
  requestText(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
    body: options.body ?? '{"agent_id":"a"}',
    signal: options.signal ?? new AbortController().signal,
    timeoutMs: options.timeoutMs ?? 5000,
  });

describe('requestText', () => {
  it('sends the body with its length and headers, and returns status and text', async () => {
    let seen: { method?: string; length?: string; key?: string; body: string } = { body: '' };
    const url = await serve((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => (body += c));
      req.on('end', () => {
        seen = { method: req.method, length: req.headers['content-length'], key: req.headers['x-api-key'] as string, body };
        res.writeHead(404, 'Not Found', { 'content-type': 'application/json' }).end('{"code":"AGENT_NOT_REGISTERED"}');
      });
    });
    const body = '{"hostname":"Zürich-fw"}';
    const answer = await post(url, { body });
    expect(seen).toEqual({ method: 'POST', length: String(Buffer.byteLength(body)), key: 'k', body });
    expect(answer).toEqual({ status: 404, statusText: 'Not Found', text: '{"code":"AGENT_NOT_REGISTERED"}' });
  });

  it('reuses one connection for requests that follow each other', async () => {
    const ports = new Set<number>();
    const url = await serve((req, res) => {
      ports.add(req.socket.remotePort!);
      res.end('{}');
    });
    for (let i = 0; i < 3; i++) await post(url);
    expect(ports.size).toBe(1);
  });

  it('says the connection was refused when nothing listens', async () => {
    const url = await serve(() => undefined);
    await new Promise((resolve) => servers.pop()!.close(resolve));
    await expect(post(url)).rejects.toThrow(/^ECONNREFUSED$/);
  });

  it('gives up on a server that does not answer in time', async () => {
    const url = await serve(() => undefined);
    await expect(post(url, { timeoutMs: 200 })).rejects.toThrow('no answer within 0.2 s');
  });

  it('cuts off an answer that is far too long', async () => {
    const url = await serve((_req, res) => {
      res.write('x'.repeat(MAX_ANSWER_CHARS));
      res.end('more');
    });
    await expect(post(url)).rejects.toThrow(`answer longer than ${MAX_ANSWER_CHARS} characters`);
  });

  it('stops waiting as soon as the agent stops', async () => {
    const url = await serve(() => undefined);
    const stop = new AbortController();
    const pending = post(url, { signal: stop.signal, timeoutMs: 60_000 });
    setTimeout(() => stop.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});
