// A refused WebSocket upgrade (issue 29, item 8) over real sockets: the answer is complete, says
// `Connection: close` and the stream then ends cleanly, so a keep-alive client never sends its next
// request into a socket the server has already thrown away (ECONNRESET).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';

let t: TestApp;
let port: number;
const agentId = 'ab'.repeat(16);
const upgradeHeaders = () => ({ connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': randomBytes(16).toString('base64') });

beforeAll(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
});
afterAll(() => t.close());

/** Sends one raw request and reads until the server ends the stream; says how it ended. */
function rawUpgrade(lines: string[]): Promise<{ text: string; ending: 'end' | string }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let ending: string | undefined;
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => (ending ??= 'end'));
    socket.on('error', (err: NodeJS.ErrnoException) => (ending ??= err.code ?? err.message));
    socket.on('close', () => resolve({ text: Buffer.concat(chunks).toString('utf8'), ending: ending ?? 'closed without end' }));
    socket.write([...lines, '', ''].join('\r\n'));
  });
}

function request(agent: http.Agent, path: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, agent, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, reused: req.reusedSocket }));
    });
    req.on('upgrade', () => reject(new Error('unexpected upgrade')));
    req.on('error', reject);
    req.end();
  });
}

describe('a refused WebSocket upgrade', () => {
  it.each([
    ['a wrong key (401)', `/api/v1/agent/ws?agent_id=${agentId}`, ['X-API-Key: rmm_wrongwrongwrongwrongwrongwrongwrong'], 401],
    ['no credentials (401)', `/api/v1/agent/ws?agent_id=${agentId}`, [], 401],
    ['an unknown path (404)', '/api/v1/no-such-socket', [], 404],
    ['a path that is not UTF-8 (400)', '/api/v1/agents/%FF', [], 400],
  ])('answers %s completely with Connection: close and ends the stream cleanly', async (_what, path, extra, status) => {
    const headers = Object.entries(upgradeHeaders()).map(([k, v]) => `${k}: ${v}`);
    const { text, ending } = await rawUpgrade([`GET ${path} HTTP/1.1`, 'Host: localhost', ...headers, ...extra]);
    expect(text).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    const [head, body] = text.split('\r\n\r\n') as [string, string];
    expect(head).toMatch(/\r\nconnection: close\r\n/i);
    expect(head).not.toMatch(/keep-alive/i);
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]);
    expect(Buffer.byteLength(body)).toBe(length);
    const code = { 400: 'VALIDATION_ERROR', 401: 'UNAUTHORIZED', 404: 'NOT_FOUND' }[status];
    expect(JSON.parse(body)).toMatchObject({ code, request_id: expect.any(String) });
    expect(ending).toBe('end');
  });

  it('leaves a keep-alive client able to send its next request (on a new connection)', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const refused = await request(agent, `/api/v1/agent/ws?agent_id=${agentId}`, { ...upgradeHeaders(), 'x-api-key': 'rmm_wrongwrongwrongwrongwrongwrongwrong' });
      expect(refused.status).toBe(401);
      expect(refused.headers.connection).toBe('close');
      // Sent at once, as a client with more work does: it must not go into the thrown-away socket.
      for (let i = 0; i < 3; i++) {
        const next = await request(agent, '/healthz', {});
        expect(next.status).toBe(200);
        if (i === 0) expect(next.reused).toBe(false);
      }
    } finally {
      agent.destroy();
    }
  });
});
