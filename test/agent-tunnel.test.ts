// The reference agent's tunnel sessions (contract §5): tunnel_connect/disconnect through the real command
// dispatcher, binary frames both ways against a real TCP target, tunnel_closed, malformed frames,
// backpressure both ways, and the optional per-session tunnel_pause/tunnel_resume. A `ws` server in the test plays the RMM server's side of the agent socket.
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { dispatchText } from '../src/agent/commands/index.js';
import type { CommandContext } from '../src/agent/commands/types.js';
import type { DeviceStateStore } from '../src/agent/device-state.js';
import { TunnelSessions } from '../src/agent/tunnel-sessions.js';
import { MAX_MESSAGE_BYTES, decodeTunnelFrame, encodeTunnelFrame } from '../src/modules/agent-hub/agent-protocol.js';

const MiB = 1024 * 1024;
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const waitFor = (check: () => unknown) => vi.waitFor(() => expect(check()).toBeTruthy(), { timeout: 20_000, interval: 5 });

/** A TCP target; `onConnection` decides what it does (default: echo). Tracks its accepted sockets. */
async function target(onConnection: (socket: net.Socket) => void = (s) => s.pipe(s)) {
  const sockets: net.Socket[] = [];
  const closed = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.push(socket);
    socket.on('close', () => closed.add(socket));
    socket.on('error', () => undefined);
    onConnection(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => {
    sockets.forEach((s) => s.destroy());
    return new Promise((resolve) => server.close(resolve));
  });
  return { port: (server.address() as AddressInfo).port, sockets, closed };
}

/** The agent's side (a TunnelSessions on a client socket, commands through dispatchText) and the server's peer. */
async function harness() {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', maxPayload: MAX_MESSAGE_BYTES });
  await once(wss, 'listening');
  const accepted = once(wss, 'connection') as Promise<[WebSocket]>;
  const agentWs = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, { maxPayload: MAX_MESSAGE_BYTES });
  const tunnels = new TunnelSessions();
  tunnels.attach(agentWs);
  const ctx = { signal: new AbortController().signal, tunnels, now: () => new Date(), device: null as unknown as DeviceStateStore } as CommandContext;
  agentWs.on('message', (data: Buffer, isBinary) => {
    if (isBinary) tunnels.handleBinary(data);
    else void dispatchText(data.toString(), ctx).then((r) => r.kind === 'answer' && agentWs.send(r.text));
  });
  let maxBuffered = 0;
  const send = agentWs.send.bind(agentWs) as (data: Buffer | string) => void;
  agentWs.send = ((data: Buffer | string) => {
    send(data);
    maxBuffered = Math.max(maxBuffered, agentWs.bufferedAmount);
  }) as typeof agentWs.send;
  const [peer] = await accepted;
  cleanups.push(async () => {
    agentWs.terminate();
    peer.terminate();
    await new Promise((resolve) => wss.close(resolve));
  });

  const texts: Array<Record<string, unknown>> = [];
  const bytes = new Map<string, Buffer[]>();
  const onData: Record<string, (payload: Buffer) => void> = {};
  peer.on('message', (data: Buffer, isBinary) => {
    if (!isBinary) return void texts.push(JSON.parse(data.toString()) as Record<string, unknown>);
    const frame = decodeTunnelFrame(data)!;
    if (onData[frame.sessionId]) return onData[frame.sessionId]!(frame.payload);
    bytes.set(frame.sessionId, [...(bytes.get(frame.sessionId) ?? []), frame.payload]);
  });
  let seq = 0;
  async function command(name: string, params: Record<string, unknown>) {
    const id = `c${++seq}`;
    peer.send(JSON.stringify({ type: 'command', id, command: name, params }));
    await waitFor(() => texts.some((t) => t.id === id));
    return texts.find((t) => t.id === id)!;
  }
  const connect = (sessionId: string, port: number) =>
    command('tunnel_connect', { session_id: sessionId, tunnel_id: 't1', target_host: '127.0.0.1', target_port: port });
  const received = (sessionId: string) => Buffer.concat(bytes.get(sessionId) ?? []).toString();
  const closedNotices = () => texts.filter((t) => t.type === 'tunnel_closed').map((t) => t.session_id);
  return { agentWs, peer, tunnels, command, connect, received, closedNotices, onData, maxBuffered: () => maxBuffered };
}

const frame = (sessionId: string, text: string | Buffer) => encodeTunnelFrame(sessionId, Buffer.from(text));

/** Byte i of a patterned stream, to check order and completeness without keeping the bytes. */
const patternByte = (i: number) => i % 251;

/** Counts a session's bytes as they arrive and checks that they continue the pattern, in order. */
function patternCheck() {
  let got = 0;
  let inOrder = true;
  return {
    take: (payload: Buffer) => {
      for (let i = 0; i < payload.length; i++) if (payload[i] !== patternByte(got + i)) inOrder = false;
      got += payload.length;
    },
    got: () => got,
    inOrder: () => inOrder,
  };
}

/** A target that streams `total` patterned bytes to whoever connects, as fast as it is read, then ends. */
async function patternedStreamer(total: number) {
  let written = 0;
  const streamer = await target((socket) => {
    const pump = () => {
      while (written < total) {
        const chunk = patterned(written, Math.min(64 * 1024, total - written));
        written += chunk.length;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
      socket.end();
    };
    pump();
  });
  return { ...streamer, written: () => written };
}
function patterned(offset: number, length: number): Buffer {
  const b = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) b[i] = patternByte(offset + i);
  return b;
}

describe('agent tunnel sessions', () => {
  it('connects, echoes frames back on the right session, and keeps interleaved sessions apart', async () => {
    const echo = await target();
    const h = await harness();
    expect(await h.connect('sA', echo.port)).toEqual({ type: 'response', id: 'c1', success: true, data: {} });
    expect(await h.connect('sB', echo.port)).toMatchObject({ success: true, data: {} });
    for (let i = 0; i < 5; i++) {
      h.peer.send(frame('sA', `a${i};`));
      h.peer.send(frame('sB', `b${i};`));
    }
    await waitFor(() => h.received('sA') === 'a0;a1;a2;a3;a4;' && h.received('sB') === 'b0;b1;b2;b3;b4;');
    expect(echo.sockets).toHaveLength(2);
    expect(h.tunnels.size).toBe(2);
  });

  it('reports tunnel_closed when the target closes, and forgets the session', async () => {
    const echo = await target();
    const h = await harness();
    await h.connect('s1', echo.port);
    await waitFor(() => echo.sockets.length === 1);
    echo.sockets[0]!.end();
    await waitFor(() => h.closedNotices().includes('s1'));
    expect(h.tunnels.size).toBe(0);
    h.peer.send(frame('s1', 'late')); // now an unknown session: dropped
    expect(await h.command('tunnel_disconnect', { session_id: 's1' })).toMatchObject({ success: true, data: {} });
  });

  it('closes the target socket on tunnel_disconnect without sending tunnel_closed for it', async () => {
    const echo = await target();
    const h = await harness();
    await h.connect('s1', echo.port);
    await h.connect('s2', echo.port);
    expect(await h.command('tunnel_disconnect', { session_id: 's1' })).toMatchObject({ success: true, data: {} });
    await waitFor(() => echo.closed.has(echo.sockets[0]!));
    h.peer.send(frame('s2', 'still here'));
    await waitFor(() => h.received('s2') === 'still here');
    expect(h.closedNotices()).toEqual([]);
    expect(h.tunnels.size).toBe(1);
  });

  it('answers success:false with the reason when the target refuses the connection', async () => {
    const gone = await target();
    const probe = net.createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const closedPort = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const h = await harness();
    const answer = await h.connect('s1', closedPort);
    expect(answer).toMatchObject({ type: 'response', success: false });
    expect(answer.error).toMatch(new RegExp(`^cannot connect to 127\\.0\\.0\\.1:${closedPort}: .*ECONNREFUSED`));
    expect(h.tunnels.size).toBe(0);
    expect(await h.connect('s1', gone.port)).toMatchObject({ success: true }); // the id is free again
  });

  it('drops malformed frames and frames for unknown sessions without harming the others', async () => {
    const echo = await target();
    const h = await harness();
    await h.connect('s1', echo.port);
    for (const bad of [Buffer.alloc(0), Buffer.from([0]), Buffer.from([0, 1, 2]), Buffer.from([40, 0x73, 0x31]), frame('nope', 'x'), frame('s', 'x')]) {
      h.peer.send(bad);
    }
    h.peer.send(frame('s1', 'ok'));
    await waitFor(() => h.received('s1') === 'ok');
    expect(h.agentWs.readyState).toBe(WebSocket.OPEN);
    expect(h.received('nope') + h.received('s')).toBe('');
  });

  it('destroys every target socket when the WebSocket closes', async () => {
    const echo = await target();
    const h = await harness();
    await h.connect('s1', echo.port);
    await h.connect('s2', echo.port);
    h.peer.close();
    await waitFor(() => echo.closed.size === 2);
    expect(h.tunnels.size).toBe(0);
  });

  it('pauses the target while the server does not read, stays bounded, and delivers all 50 MiB in order', async () => {
    const total = 50 * MiB;
    const streamer = await patternedStreamer(total);
    const h = await harness();
    const big = patternCheck();
    h.onData.big = big.take;
    h.peer.once('message', () => h.peer.pause()); // after the connect answer, the server stops reading
    await h.connect('big', streamer.port);
    await waitFor(() => h.tunnels.isTargetPaused('big'));
    const writtenWhilePaused = streamer.written();
    expect(writtenWhilePaused).toBeLessThan(total); // the target itself is held back
    expect(h.agentWs.bufferedAmount).toBeLessThan(8 * MiB);
    h.peer.resume();
    await waitFor(() => big.got() === total && h.closedNotices().includes('big'));
    expect(big.inOrder()).toBe(true);
    expect(h.maxBuffered()).toBeLessThan(8 * MiB);
  });

  it('tunnel_pause stops reading one session\'s target while the others flow; tunnel_resume delivers the rest in order', async () => {
    const total = 40 * MiB;
    const streamer = await patternedStreamer(total);
    const echo = await target();
    const h = await harness();
    const big = patternCheck();
    h.onData.big = big.take;
    await h.connect('echo', echo.port);
    await h.connect('big', streamer.port);
    await waitFor(() => big.got() > 0);
    expect(await h.command('tunnel_pause', { session_id: 'big' })).toMatchObject({ success: true, data: {} });
    // Every byte the agent read before pausing went out ahead of its answer; none may follow it.
    const atPause = big.got();
    for (let round = 0; round < 3; round++) {
      h.peer.send(frame('echo', `ping${round};`));
      await waitFor(() => h.received('echo').endsWith(`ping${round};`));
    }
    expect(big.got()).toBe(atPause);
    expect(big.got()).toBeLessThan(total);
    expect(h.tunnels.size).toBe(2);
    // Pausing twice, or a session the agent does not know, is not an error: the server may race a close.
    expect(await h.command('tunnel_pause', { session_id: 'big' })).toMatchObject({ success: true, data: {} });
    expect(await h.command('tunnel_pause', { session_id: 'gone' })).toMatchObject({ success: true, data: {} });
    expect(await h.command('tunnel_resume', { session_id: 'gone' })).toMatchObject({ success: true, data: {} });

    expect(await h.command('tunnel_resume', { session_id: 'big' })).toMatchObject({ success: true, data: {} });
    await waitFor(() => big.got() === total && h.closedNotices().includes('big'));
    expect(big.inOrder()).toBe(true);
  });

  it('stops reading the WebSocket while a target does not drain, and resumes when it does', async () => {
    let received = 0;
    const slow = await target((socket) => {
      socket.pause();
      socket.on('data', (chunk: Buffer) => (received += chunk.length));
    });
    const echo = await target();
    const h = await harness();
    await h.connect('slow', slow.port);
    await h.connect('echo', echo.port);
    const total = 32 * MiB;
    for (let sent = 0; sent < total; sent += 64 * 1024) h.peer.send(encodeTunnelFrame('slow', Buffer.alloc(64 * 1024, 7)));
    await waitFor(() => h.tunnels.inboundPaused && h.agentWs.isPaused);
    await waitFor(() => slow.sockets.length === 1);
    slow.sockets[0]!.resume();
    await waitFor(() => received === total);
    await waitFor(() => !h.tunnels.inboundPaused && !h.agentWs.isPaused);
    h.peer.send(frame('echo', 'after'));
    await waitFor(() => h.received('echo') === 'after');
  });

  it('does not stay paused when the blocking session dies', async () => {
    const stuck = await target((socket) => socket.pause());
    const echo = await target();
    const h = await harness();
    await h.connect('stuck', stuck.port);
    await h.connect('echo', echo.port);
    for (let i = 0; i < 512; i++) h.peer.send(encodeTunnelFrame('stuck', Buffer.alloc(64 * 1024, 1)));
    await waitFor(() => h.agentWs.isPaused);
    await waitFor(() => stuck.sockets.length === 1);
    stuck.sockets[0]!.destroy();
    await waitFor(() => h.closedNotices().includes('stuck'));
    await waitFor(() => !h.agentWs.isPaused);
    h.peer.send(frame('echo', 'alive'));
    await waitFor(() => h.received('echo') === 'alive');
  });
});
