// TCP tunnels through the reference agent (contract §8): bytes arrive exactly, in parallel sessions;
// sessions and tunnels close as the contract says (target EOF, DELETE frees the port, agent gone);
// malformed frames from an agent are dropped without harming other sessions; and a client that stops
// reading does not make the server buffer the target's stream.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { encodeTunnelFrame } from '../src/modules/agent-hub/agent-protocol.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';
import { connect, exchange, MiB, openTunnel as openTunnelAs, sha, tunnelsOf as tunnelsOfAs, TunnelTargets } from './helpers/tunnels.js';

let s: LiveServer;
let agentKey: string;
let writeKey: string;
let main: LiveAgent;
const targets = new TunnelTargets();
const target = (onSocket: (socket: net.Socket) => void) => targets.listen(onSocket);

const openTunnel = (agentId: string, port: number) => openTunnelAs(s, apiKey(writeKey), agentId, port);
const tunnelsOf = (agentId: string) => tunnelsOfAs(s, apiKey(writeKey), agentId);
const roundTrip = async (port: number, data: Buffer) => exchange(await connect(port), data);

beforeAll(async () => {
  s = await startLiveServer({});
  const token = await adminToken(s);
  agentKey = (await createKey(s.app, bearer(token), 'agent')).key;
  writeKey = (await createKey(s.app, bearer(token), 'write')).key;
  main = await s.startAgent(agentKey, { name: 'fw-tunnel' });
});
afterAll(async () => {
  await s?.close();
  await targets.close();
});

describe('bytes through a tunnel', () => {
  it('carries 10 parallel sessions of 8 MiB each to an echo target and back, exactly', async () => {
    const echoPort = await targets.echo();
    const tunnel = await openTunnel(main.id, echoPort);
    expect(tunnel.bind_address).toBe('127.0.0.1');
    expect(tunnel.proxy_port).toBeGreaterThanOrEqual(10_000);
    expect(tunnel.proxy_port).toBeLessThanOrEqual(20_000);

    const payloads = Array.from({ length: 10 }, () => randomBytes(8 * MiB));
    const echoed = await Promise.all(payloads.map((p) => roundTrip(tunnel.proxy_port, p)));
    echoed.forEach((back, i) => expect(sha(back), `session ${i}`).toBe(sha(payloads[i]!)));

    const [listed] = await tunnelsOf(main.id);
    expect(listed).toMatchObject({ tunnel_id: tunnel.tunnel_id, bytes_in: 80 * MiB, bytes_out: 80 * MiB });
  });
});

describe('closing', () => {
  it('gives the client an EOF after the target\'s last bytes when the target closes', async () => {
    const port = await target((socket) => socket.end('bye\n'));
    const tunnel = await openTunnel(main.id, port);
    const socket = await connect(tunnel.proxy_port);
    const received: Buffer[] = [];
    socket.on('data', (c: Buffer) => received.push(c));
    await new Promise((resolve) => socket.once('end', resolve));
    expect(Buffer.concat(received).toString()).toBe('bye\n');
    socket.destroy();
  });

  it('DELETE closes every session and frees the port', async () => {
    const port = await target(() => undefined); // holds connections open, says nothing
    const tunnel = await openTunnel(main.id, port);
    const clients = await Promise.all([connect(tunnel.proxy_port), connect(tunnel.proxy_port)]);
    const closed = clients.map((c) => new Promise((resolve) => c.once('close', resolve)));
    // A session starts once the server knows which local account connected: 20 s for a busy machine.
    await vi.waitFor(async () => expect((await tunnelsOf(main.id)).find((t) => t.tunnel_id === tunnel.tunnel_id)?.sessions).toBe(2), { timeout: 20_000 });

    const res = await s.app.inject({ method: 'DELETE', url: `/api/v1/agents/${main.id}/tunnel/${tunnel.tunnel_id}`, headers: apiKey(writeKey) });
    expect(res.json()).toEqual({ closed: true });
    await Promise.all(closed);
    // The port can be bound again.
    const probe = net.createServer();
    await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(tunnel.proxy_port, '127.0.0.1', resolve));
    await new Promise((resolve) => probe.close(resolve));
    expectError(await s.app.inject({ method: 'DELETE', url: `/api/v1/agents/${main.id}/tunnel/${tunnel.tunnel_id}`, headers: apiKey(writeKey) }), 404, 'NOT_FOUND');
  });

  it('closes the tunnels of an agent whose socket goes away, and refuses new ones (409)', async () => {
    const extra = await s.startAgent(agentKey, { name: 'fw-leaving' });
    const port = await target((socket) => socket.pipe(socket));
    const tunnel = await openTunnel(extra.id, port);
    const hubTunnels = async () =>
      ((await s.app.inject({ method: 'GET', url: '/api/v1/hub/status', headers: apiKey(writeKey) })).json() as { tunnels: Array<{ tunnel_id: string }> }).tunnels;
    expect((await hubTunnels()).map((t) => t.tunnel_id)).toContain(tunnel.tunnel_id);

    await extra.stop();
    await vi.waitFor(async () => expect(await tunnelsOf(extra.id)).toEqual([]));
    expect((await hubTunnels()).map((t) => t.tunnel_id)).not.toContain(tunnel.tunnel_id);
    const refused = await s.app.inject({ method: 'POST', url: `/api/v1/agents/${extra.id}/tunnel`, headers: apiKey(writeKey), payload: { target_host: '127.0.0.1', target_port: port } });
    expectError(refused, 409, 'AGENT_NOT_CONNECTED');
  });
});

describe('a replaced agent socket', () => {
  it('ends the sessions that lived on the old socket and keeps the tunnel for new ones', async () => {
    const extra = await s.startAgent(agentKey, { name: 'fw-replaced' });
    const port = await target(() => undefined); // holds the connection open, says nothing
    const tunnel = await openTunnel(extra.id, port);
    const client = await connect(tunnel.proxy_port);
    const clientClosed = new Promise((resolve) => client.once('close', resolve));
    await vi.waitFor(async () => expect((await tunnelsOf(extra.id))[0]?.sessions).toBe(1), { timeout: 20_000 });

    const raw = await s.openRaw(extra.id, agentKey); // replaces the agent's socket (4000)
    await clientClosed;
    expect((await tunnelsOf(extra.id)).map((t) => ({ id: t.tunnel_id, sessions: t.sessions }))).toEqual([{ id: tunnel.tunnel_id, sessions: 0 }]);
    await extra.stop();
    raw.ws.close();
  });
});

describe('a misbehaving agent', () => {
  it('drops malformed and foreign frames without harming the session they interrupt', async () => {
    const id = await s.register(agentKey, 'fw-raw');
    const raw = await s.openRaw(id, agentKey);
    const tunnel = await openTunnel(id, 9); // the raw peer plays the agent; the target is never dialled
    const client = await connect(tunnel.proxy_port);
    const connectCommand = await raw.nextCommand();
    expect(connectCommand.command).toBe('tunnel_connect');
    raw.ws.send(JSON.stringify({ type: 'response', id: connectCommand.id, success: true, data: {} }));
    const sessionId = String(connectCommand.params.session_id);

    const received: Buffer[] = [];
    client.on('data', (c: Buffer) => received.push(c));
    raw.ws.send(encodeTunnelFrame(sessionId, Buffer.from('one ')));
    raw.ws.send(Buffer.from([40, 0x61, 0x62])); // id length beyond the frame
    raw.ws.send(Buffer.alloc(0)); // empty frame
    raw.ws.send(encodeTunnelFrame('no-such-session', Buffer.from('lost ')));
    raw.ws.send(encodeTunnelFrame(sessionId, Buffer.from('two')));
    await vi.waitFor(() => expect(Buffer.concat(received).toString()).toBe('one two'));
    client.destroy();
  });
});

describe('backpressure', () => {
  it('holds at most a few MiB for a client that stops reading while the target streams 200 MiB', async () => {
    const chunk = randomBytes(MiB);
    const port = await target((socket) => {
      socket.on('error', () => undefined); // the client may be gone before the last chunk
      let sent = 0;
      const pump = () => {
        while (sent < 200) {
          sent++;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
        socket.end();
      };
      pump();
    });
    const tunnel = await openTunnel(main.id, port);
    const client = await connect(tunnel.proxy_port);
    client.pause(); // reads nothing

    let maxBuffered = 0;
    let lastOut = -1;
    // Sample until the stream has stalled: bytes_out stops growing because nobody reads.
    for (let stable = 0; stable < 5; ) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const listed = (await tunnelsOf(main.id)).find((t) => t.tunnel_id === tunnel.tunnel_id)!;
      maxBuffered = Math.max(maxBuffered, listed.buffered_bytes ?? 0);
      stable = listed.bytes_out === lastOut ? stable + 1 : 0;
      lastOut = listed.bytes_out ?? 0;
    }
    expect(lastOut).toBeLessThan(64 * MiB);
    expect(maxBuffered).toBeLessThan(64 * MiB);

    // Reading again drains the rest: all 200 MiB arrive.
    let total = 0;
    client.on('data', (c: Buffer) => (total += c.length));
    client.resume();
    await new Promise((resolve) => client.once('end', resolve));
    expect(total).toBe(200 * MiB);
  });
});
