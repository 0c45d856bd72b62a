// What one agent can make the server do by repeating itself (issue 29): garbage frames must not turn into
// one log line each (9.7 MiB of warnings in 5 s before), and a socket reconnecting in a loop is refused
// with 429 and Retry-After before the database is asked anything, while other agents connect as usual.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { AgentSocket, type SocketEvent } from '../src/agent/agent-socket.js';
import { DEFAULT_CONNECT_RATE } from '../src/modules/agent-hub/connect-rate.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';

let s: LiveServer;
let agentKey = '';
let adminKey = '';

beforeAll(async () => {
  s = await startLiveServer({ captureLogs: true });
  const admin = bearer(await adminToken(s));
  agentKey = (await createKey(s.app, admin, 'agent')).key;
  adminKey = (await createKey(s.app, admin, 'admin')).key;
});
afterAll(() => s?.close());

const droppedFrames = async () =>
  ((await s.app.inject({ method: 'GET', url: '/api/v1/hub/status', headers: apiKey(adminKey) })).json() as { dropped_frames: number }).dropped_frames;
const linesAbout = (agentId: string) =>
  s.logs().filter((line) => line.includes('dropped a malformed frame') && line.includes(agentId));

describe('a flood of malformed frames', () => {
  it('counts every dropped frame, text and binary, and logs one line per agent and window', async () => {
    const noisyId = await s.register(agentKey, 'noisy');
    const otherId = await s.register(agentKey, 'other');
    const noisy = await s.openRaw(noisyId, agentKey);
    const before = await droppedFrames();
    for (let i = 0; i < 2500; i++) {
      noisy.ws.send(`not json ${i}`);
      noisy.ws.send(Buffer.from([0xff, i & 0xff]), { binary: true }); // announces a 255-byte session id it lacks
    }
    await vi.waitFor(async () => expect(await droppedFrames()).toBe(before + 5000), { timeout: 20_000 });
    expect(linesAbout(noisyId)).toHaveLength(1);

    // Another agent's first garbage frame is still reported at once: the limit is per agent.
    const other = await s.openRaw(otherId, agentKey);
    other.ws.send('{"type":"bogus"}');
    await vi.waitFor(() => expect(linesAbout(otherId)).toHaveLength(1));
    expect(linesAbout(noisyId)).toHaveLength(1);
    expect(noisy.ws.readyState).toBe(WebSocket.OPEN);
  });
});

describe('an agent reconnecting in a loop', () => {
  /** Opens and closes one socket; the HTTP status and Retry-After when refused. */
  async function connectOnce(agentId: string, key: string): Promise<{ opened: true } | { status: number; retryAfter: string | undefined; body: string }> {
    const ws = new WebSocket(s.socketUrl(agentId), { headers: apiKey(key) });
    return new Promise((resolve, reject) => {
      ws.on('open', () => {
        ws.close(1000);
        ws.on('close', () => resolve({ opened: true }));
      });
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body }));
      });
      ws.on('error', (err) => {
        if (!err.message.includes('Unexpected server response')) reject(err);
      });
    });
  }

  it('is refused with 429 and Retry-After after its allowance, without holding up other agents', async () => {
    const loopingId = await s.register(agentKey, 'looping');
    const calmId = await s.register(agentKey, 'calm');
    for (let i = 0; i < DEFAULT_CONNECT_RATE.burst; i++) expect(await connectOnce(loopingId, agentKey)).toEqual({ opened: true });

    const refused = await connectOnce(loopingId, agentKey);
    expect(refused).toMatchObject({ status: 429, retryAfter: expect.stringMatching(/^[1-9]\d*$/) });
    expect(JSON.parse((refused as { body: string }).body)).toMatchObject({ code: 'RATE_LIMITED', request_id: expect.any(String) });
    const retryAfter = Number((refused as { retryAfter: string }).retryAfter);
    expect(retryAfter).toBeLessThanOrEqual(DEFAULT_CONNECT_RATE.refillMs / 1000);

    // Another agent on the same key, and the same agent with another credential, are not affected.
    expect(await connectOnce(calmId, agentKey)).toEqual({ opened: true });
    const otherKey = (await createKey(s.app, apiKey(adminKey), 'agent')).key;
    expect(await connectOnce(loopingId, otherKey)).toEqual({ opened: true });
  });
});

describe('the reference agent', () => {
  it('waits at least as long as a refused upgrade\'s Retry-After before trying again', async () => {
    const refuser = http.createServer((_req, res) => res.writeHead(429, { 'retry-after': '7', connection: 'close' }).end());
    refuser.on('upgrade', (req, socket) => {
      socket.end('HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    });
    await new Promise<void>((resolve) => refuser.listen(0, '127.0.0.1', resolve));
    const events: SocketEvent[] = [];
    const socket = new AgentSocket({
      url: () => `ws://127.0.0.1:${(refuser.address() as AddressInfo).port}/api/v1/agent/ws?agent_id=ab`,
      apiKey: 'k',
      backoff: { initialMs: 100, maxMs: 60_000, stableAfterMs: 60_000, random: () => 0.5 },
      silenceTimeoutMs: 60_000,
      onText: () => undefined,
      onEvent: (event) => events.push(event),
    });
    try {
      socket.start();
      await vi.waitFor(() => expect(events.some((e) => e.type === 'reconnect_scheduled')).toBe(true));
      expect(events.find((e) => e.type === 'error')).toMatchObject({ status: 429 });
      expect(events.find((e) => e.type === 'reconnect_scheduled')).toMatchObject({ delayMs: 7000 });
    } finally {
      await socket.stop();
      await new Promise((resolve) => refuser.close(resolve));
    }
  });
});
