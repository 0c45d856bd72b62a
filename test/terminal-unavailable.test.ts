// A server whose PTY library cannot be loaded (issue 56: a native binary missing from node_modules, as
// an install without its platform's optional package leaves it) starts and serves everything else; it
// says why in one warning line at start-up, and the terminal answers 503 TERMINAL_UNAVAILABLE in the
// contract's error body, to an upgrade and to a plain request alike, after authentication.
// deploy/smoke.sh does the same for real: it deletes the binary package from a production folder.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { adminToken, bearer } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';

// A real failed import of a package that is not installed, as the library's missing binary package is.
const missingBinary = () => import(['@lydell', 'node-pty-not-installed'].join('/'));

let s: LiveServer;
let token: string;
beforeAll(async () => {
  s = await startLiveServer({ captureLogs: true, loadPty: missingBinary });
  token = await adminToken(s);
});
afterAll(() => s?.close());

function upgradeRefusal(query: string): Promise<{ status: number; body: { error: string; code: string; request_id: string } }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${s.url.replace('http:', 'ws:')}/api/v1/terminal?${query}`);
    ws.once('open', () => {
      ws.close();
      reject(new Error('the terminal opened'));
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) as never }));
    });
    ws.once('error', reject);
  });
}

describe('the PTY module cannot be loaded', () => {
  it('the server is ready and says so once in its start-up log', async () => {
    expect((await s.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const lines = s.logs().filter((line) => line.includes('terminal unavailable'));
    expect(lines).toHaveLength(1);
    // A warning: the server is sound; one feature is off.
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 40, msg: expect.stringMatching(/^terminal unavailable: the PTY module could not be loaded \(.*node-pty-not-installed.*\); the server runs without the web terminal$/) });
  });

  it('the terminal answers 503 TERMINAL_UNAVAILABLE with the reason, to an upgrade and to a plain request', async () => {
    const refused = await upgradeRefusal(`token=${token}`);
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ error: expect.stringMatching(/^terminal unavailable: the PTY module could not be loaded/), code: 'TERMINAL_UNAVAILABLE', request_id: expect.any(String) });
    const plain = await s.app.inject({ method: 'GET', url: '/api/v1/terminal', headers: bearer(token) });
    expect(plain.statusCode).toBe(503);
    expect(plain.json()).toMatchObject({ code: 'TERMINAL_UNAVAILABLE' });
  });

  it('GET /terminal/status says so with 200, for the console to ask before it opens a socket', async () => {
    const status = await s.app.inject({ method: 'GET', url: '/api/v1/terminal/status', headers: bearer(token) });
    expect(status.statusCode).toBe(200);
    expect(status.json()).toEqual({ available: false, reason: expect.stringMatching(/^terminal unavailable: the PTY module could not be loaded/) });
  });

  it('still asks who is calling first: no token is 401, not the reason', async () => {
    const anonymous = await s.app.inject({ method: 'GET', url: '/api/v1/terminal' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.body).not.toContain('PTY');
  });

  it('everything else works', async () => {
    const customer = await s.app.inject({ method: 'POST', url: '/api/v1/customers', headers: bearer(token), payload: { number: '10042', name: 'Still Here GmbH' } });
    expect(customer.statusCode).toBe(201);
    const list = await s.app.inject({ method: 'GET', url: '/api/v1/customers', headers: bearer(token) });
    expect(list.body).toContain('Still Here GmbH');
  });
});
