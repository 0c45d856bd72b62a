// Agent traffic at the production log level: no line per heartbeat, one summary a minute (here: on
// close); at debug the per-request lines are back. People's requests get one line each at info, when
// answered; a WebSocket session and a request its client gave up on keep a line of their own.
import net, { type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { fixtureText } from './helpers/fixtures.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';

interface Line {
  level: number;
  msg: string;
  reqId?: string;
  req?: { method: string; url: string; remoteAddress?: string };
  res?: { statusCode: number };
  responseTime?: number;
  agent_traffic?: { agent_requests: number; heartbeats: number; p50_ms: number; p99_ms: number; client_errors: number; server_errors: number };
}
const INFO = 30;
const DEBUG = 20;

const apps: TestApp[] = [];
afterAll(() => Promise.all(apps.map((t) => t.close().catch(() => undefined))));

/** A server with one registered agent; sends `beats` heartbeats and one for an unknown agent. */
async function serverWithTraffic(logLevel: 'info' | 'debug', beats: number) {
  const t = await buildTestApp({ captureLogs: true, logLevel });
  apps.push(t);
  const token = await adminToken(t);
  const key = (await createKey(t.app, bearer(token), 'agent')).key;
  const body = JSON.parse(fixtureText('heartbeat-linux.json')) as Record<string, unknown>;
  const agentId = 'a0a0a0a0a0a0a0a0';
  const reg = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(key), payload: { agent_id: agentId, hostname: 'h1', platform: 'linux' } });
  expect(reg.statusCode, reg.body).toBe(200);
  for (let i = 0; i < beats; i += 1) {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: apiKey(key), payload: { ...body, agent_id: agentId } });
    expect(res.statusCode, res.body).toBe(200);
  }
  const unknown = await t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: apiKey(key), payload: { ...body, agent_id: 'b1b1b1b1b1b1b1b1' } });
  expect(unknown.statusCode).toBe(404);
  const people = await t.app.inject({ method: 'GET', url: '/api/v1/customers', headers: bearer(token) });
  expect(people.statusCode).toBe(200);
  return t;
}

const parsed = (t: TestApp) => t.logs().map((l) => JSON.parse(l) as Line);
const agentLines = (lines: Line[]) => lines.filter((l) => l.req?.url.startsWith('/api/v1/agent/'));

describe('agent traffic in the log', () => {
  it('at info: no per-request lines for agents, a summary with the counts, one line per person\'s request', async () => {
    const t = await serverWithTraffic('info', 5);
    expect(agentLines(parsed(t))).toEqual([]);
    // One line for the person's request, with what it asked, what it got and how long it took.
    const people = parsed(t).filter((l) => l.req?.url === '/api/v1/customers');
    expect(people).toHaveLength(1);
    expect(people[0]).toMatchObject({ level: INFO, msg: 'request completed', req: { method: 'GET', url: '/api/v1/customers' }, res: { statusCode: 200 } });
    expect(people[0]!.reqId).toEqual(expect.any(String));
    expect(people[0]!.responseTime).toBeGreaterThan(0);

    await t.close();
    const summaries = parsed(t).filter((l) => l.agent_traffic);
    expect(summaries).toHaveLength(1);
    expect(summaries[0]!.level).toBe(INFO);
    expect(summaries[0]!.agent_traffic).toMatchObject({ agent_requests: 7, heartbeats: 6, client_errors: 1, server_errors: 0 });
    expect(summaries[0]!.agent_traffic!.p99_ms).toBeGreaterThanOrEqual(summaries[0]!.agent_traffic!.p50_ms);
  });

  it('at debug: every agent request has its incoming and completed lines, at debug', async () => {
    const t = await serverWithTraffic('debug', 2);
    const lines = parsed(t).filter((l) => l.msg === 'incoming request' && l.req?.url.startsWith('/api/v1/agent/'));
    expect(lines.map((l) => l.req!.url)).toEqual(['/api/v1/agent/register', '/api/v1/agent/heartbeat', '/api/v1/agent/heartbeat', '/api/v1/agent/heartbeat']);
    expect(new Set(lines.map((l) => l.level))).toEqual(new Set([DEBUG]));
    expect(parsed(t).filter((l) => l.msg === 'request completed' && l.level === DEBUG)).toHaveLength(4);
    // The person's request: its incoming line at debug too, the completed one at info.
    const people = parsed(t).filter((l) => l.req?.url === '/api/v1/customers');
    expect(people.map((l) => [l.msg, l.level])).toEqual([['incoming request', DEBUG], ['request completed', INFO]]);
  });
});

/** A route that answers only when released, and a WebSocket route that greets and stays open. */
function probeRoutes(entered: () => void, release: Promise<void>) {
  return (app: FastifyInstance) => {
    app.get('/api/v1/probe/slow', { config: { access: 'public' } }, async () => {
      entered();
      await release;
      return { done: true };
    });
    app.get('/api/v1/probe/socket', { config: { access: 'public' }, websocket: true }, (socket) => socket.send('hello'));
  };
}

async function listening(t: TestApp): Promise<number> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return (t.app.server.address() as AddressInfo).port;
}

describe("people's requests without an answer", () => {
  it('a request whose client leaves before the answer is logged as aborted, once', async () => {
    let entered!: () => void;
    let release!: () => void;
    const inRoute = new Promise<void>((resolve) => (entered = resolve));
    const t = await buildTestApp({ captureLogs: true, extend: probeRoutes(entered, new Promise((resolve) => (release = resolve))) });
    apps.push(t);
    const socket = net.connect(await listening(t), '127.0.0.1');
    socket.write('GET /api/v1/probe/slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await inRoute;
    socket.destroy();
    await expect.poll(() => parsed(t).filter((l) => l.msg === 'request aborted')).toHaveLength(1);
    release();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const lines = parsed(t).filter((l) => l.req?.url === '/api/v1/probe/slow');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: INFO, msg: 'request aborted', req: { method: 'GET', remoteAddress: '127.0.0.1' } });
  });

  it('a WebSocket session is logged when it opens; a refused upgrade also gets its answer line', async () => {
    const t = await buildTestApp({ captureLogs: true, extend: probeRoutes(() => undefined, Promise.resolve()) });
    apps.push(t);
    const port = await listening(t);
    const session = new WebSocket(`ws://127.0.0.1:${port}/api/v1/probe/socket`);
    await new Promise((resolve, reject) => session.on('message', resolve).on('error', reject));
    const opened = parsed(t).filter((l) => l.req?.url === '/api/v1/probe/socket');
    expect(opened.map((l) => [l.msg, l.level])).toEqual([['incoming request', INFO]]);
    session.terminate();

    // No credentials: 401, answered over HTTP.
    const refused = new WebSocket(`ws://127.0.0.1:${port}/api/v1/terminal`);
    const status = await new Promise<number>((resolve) => refused.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)).on('error', () => undefined));
    expect(status).toBe(401);
    await expect
      .poll(() => parsed(t).filter((l) => l.req?.url === '/api/v1/terminal').map((l) => [l.msg, l.level, l.res?.statusCode]))
      .toEqual([['incoming request', INFO, undefined], ['request completed', INFO, 401]]);
  });
});
