// The reference agent's socket after its server instance died: many agents that lost their connections in
// the same instant wait over the whole drop window instead of coming back together (issue 32, full
// jitter), while an agent whose attempts are refused climbs the ordinary ladder from one initialMs.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocketServer } from 'ws';
import { AgentSocket, type SocketEvent } from '../src/agent/agent-socket.js';
import { DROP_RUNG } from '../src/agent/reconnect-delay.js';

const sockets: AgentSocket[] = [];
const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  await Promise.all(sockets.splice(0).map((s) => s.stop()));
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `ws://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/agent/ws?agent_id=ab`;
}

function agentSocket(url: string, initialMs: number, random: () => number, events: SocketEvent[]): AgentSocket {
  const socket = new AgentSocket({
    url: () => url,
    apiKey: 'k',
    backoff: { initialMs, maxMs: 3_600_000, stableAfterMs: 60_000, random },
    silenceTimeoutMs: 60_000,
    onText: () => undefined,
    onEvent: (event) => events.push(event),
  });
  sockets.push(socket);
  return socket;
}

const delays = (events: SocketEvent[]) => events.flatMap((e) => (e.type === 'reconnect_scheduled' ? [e.delayMs] : []));

describe('agents whose instance died', () => {
  it('spread their reconnects over the whole drop window', async () => {
    // An instance that accepts each socket and then dies: every connection is cut without a close frame.
    const server = http.createServer();
    const wss = new WebSocketServer({ server });
    closers.push(() => new Promise((resolve) => wss.close(() => resolve())));
    const url = await listen(server);
    let accepted = 0;
    wss.on('connection', (ws) => {
      accepted += 1;
      ws.on('error', () => undefined);
    });

    // 40 agents, their random draws evenly spaced over [0, 1), so the waits must cover the window evenly.
    const count = 40;
    const initialMs = 60_000; // long enough that no agent reconnects while the test looks
    const events = Array.from({ length: count }, () => [] as SocketEvent[]);
    events.forEach((list, i) => agentSocket(url, initialMs, () => (i + 0.5) / count, list).start());
    await vi.waitFor(() => expect(accepted).toBe(count));
    for (const ws of wss.clients) ws.terminate();
    await vi.waitFor(() => expect(events.every((list) => delays(list).length === 1)).toBe(true));

    expect(events.every((list) => list.some((e) => e.type === 'disconnected' && e.code === 1006))).toBe(true);
    const windowMs = initialMs * 2 ** DROP_RUNG;
    const waits = events.map((list) => delays(list)[0]!).sort((a, b) => a - b);
    // Agent i waits (i + 0.5)/40 of the window: the earliest within the first 40th, the last within the last.
    expect(waits[0]).toBeLessThan(windowMs / count);
    expect(waits[count - 1]).toBeGreaterThan(windowMs - windowMs / count);
    expect(waits[count - 1]).toBeLessThanOrEqual(windowMs);
    expect(new Set(waits).size).toBe(count);
  });

  it('climbs from one initialMs when attempts are refused before the socket opens', async () => {
    const refuser = http.createServer((_req, res) => res.writeHead(503).end());
    refuser.on('upgrade', (_req, socket) => socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'));
    const url = await listen(refuser);
    const events: SocketEvent[] = [];
    // The highest draw: each wait is its whole window, 20 ms doubling.
    agentSocket(url, 20, () => 0.999_999, events).start();
    await vi.waitFor(() => expect(delays(events).length).toBeGreaterThanOrEqual(3));
    expect(delays(events).slice(0, 3)).toEqual([20, 40, 80]);
    expect(events.some((e) => e.type === 'error' && e.status === 503)).toBe(true);
  });
});
