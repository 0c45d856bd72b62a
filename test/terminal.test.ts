// The web terminal (contract §11, issue 13) over a real socket: a signed-in user gets a shell that runs
// `echo $((6*7))` and follows resizes; API keys, pending two-factor tokens, expired tokens and foreign
// Origins are refused before the upgrade; closing the socket leaves no shell behind; sessions are
// limited per user and audited; TERMINAL_ENABLED=false turns the route off.
import { generate } from 'otplib';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { ACCESS_TOKEN_SECONDS } from '../src/modules/auth/tokens.js';
import { FakeClock } from '../src/platform/clock.js';
import { adminToken, bearer, createKey, login, seedUser } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';
import { processGone, refusalOf, typeInto } from './helpers/terminal-socket.js';
import { trackedSockets } from './helpers/ws-sockets.js';

const clock = new FakeClock(new Date());
/** Every socket a test opened: closed after each test, so a failed test does not hold sessions. */
const sockets = trackedSockets();
afterEach(() => sockets.closeAll());
let s: LiveServer;
let token: string;

/** Opens the terminal; resolves with the socket and everything it prints, or rejects with the refusal status. */
function openTerminal(query: string, headers: Record<string, string> = {}): Promise<{ ws: WebSocket; output: () => string }> {
  const url = `${s.url.replace('http:', 'ws:')}/api/v1/terminal?${query}`;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    sockets.add(ws);
    let output = '';
    ws.on('message', (data: Buffer) => (output += data.toString('utf8')));
    ws.once('open', () => resolve({ ws, output: () => output }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode, body })));
    });
    ws.once('error', reject);
  });
}
const refusal = (query: string, headers: Record<string, string> = {}) => refusalOf(openTerminal(query, headers));
const type = typeInto;


beforeAll(async () => {
  s = await startLiveServer({ clock, env: { TERMINAL_SHELL: '/bin/sh' } });
  token = await adminToken(s);
});
afterAll(() => s?.close());

describe('a signed-in user', () => {
  it('gets a shell: echo $((6*7)) answers 42, and a resize changes stty size', async () => {
    const { ws, output } = await openTerminal(`token=${token}&cols=100&rows=30`);
    type(ws, 'echo $((6*7))\n');
    // The answer on a line of its own, after the echoed command (which holds no 42) and maybe a prompt.
    await vi.waitFor(() => expect(output()).toMatch(/(^|\D)42\r?\n/));
    type(ws, 'stty size\n');
    await vi.waitFor(() => expect(output()).toContain('30 100'));
    ws.send(JSON.stringify({ type: 'resize', cols: 132, rows: 43 }));
    ws.send('{"type":"nonsense"}'); // an unknown control frame changes nothing
    type(ws, 'stty size\n');
    await vi.waitFor(() => expect(output()).toContain('43 132'));
    ws.close();
  });

  it('leaves no shell process behind when the socket closes', async () => {
    const { ws, output } = await openTerminal(`token=${token}`);
    type(ws, 'echo "pid=$$"\n');
    await vi.waitFor(() => expect(output()).toMatch(/pid=\d+/));
    const pid = Number(/pid=(\d+)/.exec(output())![1]);
    expect(processGone(pid)).toBe(false);
    ws.close();
    await vi.waitFor(() => expect(processGone(pid)).toBe(true), { timeout: 10_000 });
  });

  it('closes the socket when the shell exits, and audits start and end without keystrokes', async () => {
    const { ws } = await openTerminal(`token=${token}`);
    const closed = new Promise<number>((resolve) => ws.once('close', resolve));
    type(ws, 'echo secret-keystrokes; exit\n');
    expect(await closed).toBe(1000);
    const audit = await s.app.inject({ method: 'GET', url: '/api/v1/audit?action=terminal.end', headers: bearer(token) });
    const entries = audit.json() as Array<{ actor: string; action: string; path: string }>;
    expect(entries[0]).toMatchObject({ actor: 'admin', action: 'terminal.end', path: expect.stringMatching(/^\/api\/v1\/terminal;duration_s=\d+;reason=shell$/) });
    const all = await s.app.inject({ method: 'GET', url: '/api/v1/audit', headers: bearer(token) });
    expect(all.body).toContain('terminal.start');
    expect(all.body).not.toContain('secret-keystrokes');
  });

  it('gets at most five sessions at once', async () => {
    const open = await Promise.all(Array.from({ length: 5 }, () => openTerminal(`token=${token}`)));
    expect(await refusal(`token=${token}`)).toEqual({ status: 429, code: 'RATE_LIMITED' });
    const firstClosed = new Promise((resolve) => open[0]!.ws.once('close', resolve));
    open[0]!.ws.close();
    await firstClosed;
    await vi.waitFor(async () => expect((await refusal(`token=${token}`)).status).toBe(101));
    for (const { ws } of open) ws.close();
  });
});

describe('GET /terminal/status', () => {
  it('says the terminal is available to a signed-in user, and refuses API keys as the terminal does', async () => {
    const ok = await s.app.inject({ method: 'GET', url: '/api/v1/terminal/status', headers: bearer(token) });
    expect(ok.json()).toEqual({ available: true, reason: null });
    const admin = (await createKey(s.app, bearer(token), 'admin')).key;
    expect((await s.app.inject({ method: 'GET', url: '/api/v1/terminal/status', headers: { 'x-api-key': admin } })).statusCode).toBe(401);
  });
});

describe('refused before the upgrade', () => {
  it('refuses API keys of any permission, even admin, with 401', async () => {
    const admin = (await createKey(s.app, bearer(token), 'admin')).key;
    expect(await refusal('', { 'x-api-key': admin })).toEqual({ status: 401, code: 'UNAUTHORIZED' });
    expect(await refusal(`api_key=${admin}`)).toEqual({ status: 401, code: 'UNAUTHORIZED' });
    expect(await refusal('')).toEqual({ status: 401, code: 'UNAUTHORIZED' });
  });

  it('refuses a pending two-factor token', async () => {
    await seedUser(s, 'bob', 'bob-password-1');
    const bobToken = await login(s.app, 'bob', 'bob-password-1');
    const setup = (await s.app.inject({ method: 'POST', url: '/api/v1/auth/2fa/setup', headers: bearer(bobToken), payload: {} })).json() as { secret: string };
    const code = await generate({ secret: setup.secret, epoch: Math.floor(clock.now().getTime() / 1000) });
    expect((await s.app.inject({ method: 'POST', url: '/api/v1/auth/2fa/confirm', headers: bearer(bobToken), payload: { code } })).statusCode).toBe(200);
    const pending = (await s.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'bob', password: 'bob-password-1' } })).json() as { pending_token: string };
    expect(await refusal(`token=${pending.pending_token}`)).toEqual({ status: 401, code: 'UNAUTHORIZED' });
  });

  it('refuses a foreign Origin with 403 and accepts the server\'s own', async () => {
    expect(await refusal(`token=${token}`, { origin: 'https://evil.example' })).toEqual({ status: 403, code: 'FORBIDDEN' });
    expect((await refusal(`token=${token}`, { origin: s.url })).status).toBe(101);
  });

  it('refuses an expired token', async () => {
    const soonExpired = await login(s.app, 'admin', 'admin-password-1');
    await clock.advance((ACCESS_TOKEN_SECONDS + 60) * 1000);
    expect(await refusal(`token=${soonExpired}`)).toEqual({ status: 401, code: 'UNAUTHORIZED' });
  });
});

describe('TERMINAL_ENABLED=false', () => {
  let off: LiveServer;
  beforeAll(async () => {
    off = await startLiveServer({ env: { TERMINAL_ENABLED: 'false' } });
  });
  afterAll(() => off?.close());

  it('answers 404 on the terminal path', async () => {
    const offToken = await adminToken(off);
    const res = await off.app.inject({ method: 'GET', url: `/api/v1/terminal?token=${offToken}` });
    expect(res.statusCode).toBe(404);
  });
});
