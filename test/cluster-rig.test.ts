// The cluster test rig on its own (no PostgreSQL, no RMM server): its nats-server can be killed and
// started again on the same port, and HAProxy with the documented deploy/haproxy/haproxy.cfg spreads
// requests over two instances, keeps an idle WebSocket open past the HTTP timeouts, sends no requests to an
// instance whose /readyz fails (its database is away) but leaves its agents' sockets alone, cuts those
// when its /healthz fails too (it is dead or hung), and takes it back once it answers again; with no
// instance at all it answers 503 as the server would.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { clusterToolsSkip, freePort, probeTcp, startHaproxy, startNats, type HaproxyProcess } from './helpers/cluster-rig.js';

const rig = clusterToolsSkip('cluster rig');

/** A stand-in for an RMM instance: /healthz, /readyz, /who, /slow, and an echoing WebSocket. */
async function fakeInstance(name: string) {
  const state = { alive: true, ready: true, forwardedFor: [] as string[] };
  const server = http.createServer((req, res) => {
    if (req.url === '/healthz') return void res.writeHead(state.alive ? 200 : 503).end();
    if (req.url === '/readyz') return void res.writeHead(state.alive && state.ready ? 200 : 503).end();
    if (req.url === '/slow') return void setTimeout(() => res.writeHead(200).end('late'), 2500);
    state.forwardedFor.push(String(req.headers['x-forwarded-for']));
    res.writeHead(200, { 'content-type': 'text/plain' }).end(name);
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => {
    ws.send(name);
    ws.on('message', (data) => ws.send(data.toString()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    name,
    port: (server.address() as AddressInfo).port,
    state,
    close: async () => {
      for (const ws of wss.clients) ws.terminate();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A WebSocket through HAProxy: resolves with the instance's name (its first message). */
async function openSocket(url: string): Promise<{ ws: WebSocket; instance: string; closed: Promise<number> }> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/api/v1/agent/ws`);
  const closed = new Promise<number>((resolve) => ws.once('close', resolve));
  ws.on('error', () => undefined);
  const instance = await new Promise<string>((resolve, reject) => {
    ws.once('message', (data: Buffer) => resolve(data.toString()));
    ws.once('close', (code) => reject(new Error(`closed with ${code} before the greeting`)));
  });
  return { ws, instance, closed };
}

function echo(ws: WebSocket, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    ws.once('message', (data: Buffer) => resolve(data.toString()));
    ws.once('close', (code) => reject(new Error(`closed with ${code}`)));
    ws.send(text);
  });
}

async function who(url: string, times: number): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < times; i++) names.push(await (await fetch(`${url}/who`)).text());
  return names;
}

const count = (names: string[], name: string) => names.filter((n) => n === name).length;

describe.skipIf(rig.skip)(rig.title, () => {
  it('runs a nats-server that a test can SIGKILL and start again on the same port', async () => {
    const nats = await startNats();
    try {
      expect(nats.url).toBe(`nats://127.0.0.1:${nats.port}`);
      const greets = () => probeTcp(nats.port, (line) => line.startsWith('INFO '));
      expect(await greets()).toBe(true);
      await nats.kill();
      expect(await probeTcp(nats.port)).toBe(false);
      await nats.restart();
      expect(await greets()).toBe(true);
    } finally {
      await nats.stop();
    }
    expect(await probeTcp(nats.port)).toBe(false);
  });

  it('answers 503 in the API\'s error body with Retry-After when no instance can take a request', async () => {
    // Two instances that are gone: nothing listens on their ports.
    const gone = await Promise.all(['rmm-a', 'rmm-b'].map(async (name) => ({ name, port: await freePort() })));
    const proxy = await startHaproxy(gone);
    try {
      const res = await fetch(`${proxy.url}/api/v1/agents`);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toEqual({ error: expect.any(String), code: 'SERVICE_UNAVAILABLE', request_id: res.headers.get('x-request-id') });
      expect(body.request_id).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await proxy.stop();
    }
  });

  describe('HAProxy with deploy/haproxy/haproxy.cfg', () => {
    let a: Awaited<ReturnType<typeof fakeInstance>>;
    let b: Awaited<ReturnType<typeof fakeInstance>>;
    let proxy: HaproxyProcess;
    /** HAProxy's verdict on one instance, per backend: { rmm_requests: 'UP', rmm_sockets: 'UP' }. */
    const states = async (server: string) =>
      Object.fromEntries((await proxy.serverStates()).filter((s) => s.server === server).map((s) => [s.backend, s.status]));
    const both = (status: string) => ({ rmm_requests: status, rmm_sockets: status });

    beforeAll(async () => {
      [a, b] = await Promise.all([fakeInstance('rmm-a'), fakeInstance('rmm-b')]);
      // HTTP timeouts of 1 s, so the test sees within seconds that a WebSocket lives by `timeout tunnel`.
      proxy = await startHaproxy([a, b].map((i) => ({ name: i.name, port: i.port })), { timeouts: { client: '1s', server: '1s' } });
    });
    afterAll(async () => {
      await proxy?.stop();
      await Promise.all([a?.close(), b?.close()]);
    });

    it('checks both instances and spreads requests over them, with X-Forwarded-For', async () => {
      // Servers start as "UP 1/2" (not yet confirmed by `rise 2` checks); both checks pass within ~4 s.
      await vi.waitFor(async () => expect([await states('rmm-a'), await states('rmm-b')]).toEqual([both('UP'), both('UP')]), { timeout: 10_000 });
      const names = await who(proxy.url, 8);
      expect(count(names, 'rmm-a')).toBe(4);
      expect(count(names, 'rmm-b')).toBe(4);
      expect([...a.state.forwardedFor, ...b.state.forwardedFor].every((f) => f === '127.0.0.1')).toBe(true);
    });

    it('keeps an idle WebSocket open past the HTTP timeouts that cut a slow request', async () => {
      expect((await fetch(`${proxy.url}/slow`)).status).toBe(504);
      const { ws } = await openSocket(proxy.url);
      try {
        await new Promise((resolve) => setTimeout(resolve, 2500)); // idle for 2.5 times `timeout client`
        expect(await echo(ws, 'still here')).toBe('still here');
      } finally {
        ws.terminate();
      }
    });

    it('sends no requests to an instance without its database, cuts its sockets once it stops answering, takes it back', async () => {
      const first = await openSocket(proxy.url);
      const second = await openSocket(proxy.url);
      // leastconn: the second socket goes to the instance without one.
      expect([first.instance, second.instance].sort()).toEqual(['rmm-a', 'rmm-b']);
      const [onA, onB] = first.instance === 'rmm-a' ? [first, second] : [second, first];

      // rmm-b lost its database (/readyz 503): requests avoid it, its agents stay connected.
      b.state.ready = false;
      await vi.waitFor(async () => expect(await states('rmm-b')).toEqual({ rmm_requests: 'DOWN', rmm_sockets: 'UP' }), { timeout: 10_000 });
      expect(await who(proxy.url, 6)).toEqual(new Array(6).fill('rmm-a'));
      expect(await echo(onB.ws, 'b holds on')).toBe('b holds on');

      // rmm-b stops answering (/healthz 503, as a hung or vanished instance): on-marked-down
      // shutdown-sessions cuts its agents, who reconnect to rmm-a.
      b.state.alive = false;
      await vi.waitFor(async () => expect(await states('rmm-b')).toEqual(both('DOWN')), { timeout: 10_000 });
      await onB.closed;
      expect(await echo(onA.ws, 'a lives')).toBe('a lives');
      const replacement = await openSocket(proxy.url);
      expect(replacement.instance).toBe('rmm-a');

      Object.assign(b.state, { alive: true, ready: true });
      await vi.waitFor(async () => expect(await states('rmm-b')).toEqual(both('UP')), { timeout: 10_000 });
      // (Round robin lets a server that came back catch up first, so no even split here.)
      expect(await who(proxy.url, 6)).toContain('rmm-b');
      // rmm-a holds both sockets now: the next one goes to rmm-b.
      const third = await openSocket(proxy.url);
      expect(third.instance).toBe('rmm-b');
      for (const s of [onA, replacement, third]) s.ws.terminate();
    });
  });
});
