// Tunnels in cluster mode (issue 32, build 2) with real parts: two server processes on one PostgreSQL
// database and a nats-server of the test's own, a reference agent connected to instance a, and every
// tunnel call made through instance b. The tunnel lives on a (where the agent's socket is), its bytes
// go straight to a's proxy port or through b's proxy WebSocket forwarded to a, never over NATS. Cluster
// mode needs PostgreSQL, so this runs in the PostgreSQL pass.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { createWebSocketStream } from 'ws';
import type { ReferenceAgent } from '../src/agent/reference-agent.js';
import { startClusterPair, type ClusterPair, type Instance } from './helpers/cluster-instances.js';
import { clusterToolsSkip, startNats } from './helpers/cluster-rig.js';
import { testDbKind } from './helpers/db.js';
import { apiKey } from './helpers/identity.js';
import { PROCESS_TEST_TIMEOUT_MS } from './helpers/spawn-server.js';
import { exchange, TunnelTargets } from './helpers/tunnels.js';

/** Opens the proxy WebSocket; resolves the socket, or the HTTP status of a refused handshake. */
function openProxy(via: Instance, tunnelId: string, headers: Record<string, string>): Promise<WebSocket | number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${via.url.replace('http:', 'ws:')}/api/v1/proxy/${tunnelId}`, { headers });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    ws.once('error', reject);
  });
}

function tcpConnect(host: string, port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host, () => resolve(socket));
    socket.once('error', reject);
  });
}

const rig = clusterToolsSkip('cluster mode: tunnels live on the instance holding the agent');

describe.skipIf(testDbKind() !== 'postgres' || rig.skip)(rig.title, { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let c: ClusterPair;
  let onA: ReferenceAgent;
  let otherKey: string;
  const targets = new TunnelTargets();
  let echoPort: number;

  beforeAll(async () => {
    nats = await startNats();
    c = await startClusterPair(nats.url);
    onA = await c.startAgent(c.a.url, 'tunnels-on-a');
    echoPort = await targets.echo();
    // A second caller allowed to write to the agent, who did not open the tunnel.
    const key = await c.call(c.b, 'POST', '/apikeys', { name: 'someone else', permissions: 'write' });
    expect(key.status).toBe(201);
    otherKey = key.json.key;
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(async () => {
    await c?.close();
    await nats?.stop();
    await targets.close();
  });

  it('opens through b a tunnel on a, carries bytes both ways, lets only its opener in, and closes through b', async () => {
    const opened = await c.call(c.b, 'POST', `/agents/${onA.agentId}/tunnel`, { target_host: '127.0.0.1', target_port: echoPort, allow_from: ['127.0.0.1'] });
    expect(opened.status, JSON.stringify(opened.json)).toBe(201);
    const tunnel = opened.json as { tunnel_id: string; proxy_host: string; proxy_port: number };
    expect(tunnel.proxy_host).toBe('127.0.0.1'); // both instances advertise 127.0.0.1 in this rig

    // The port is a's: /hub/status (from either instance) says so.
    const status = await c.call(c.b, 'GET', '/hub/status');
    expect(status.json.tunnels.map((t: { tunnel_id: string; instance_id: string }) => [t.tunnel_id, t.instance_id])).toEqual([[tunnel.tunnel_id, 'a']]);
    // Listed through either instance.
    for (const via of [c.a, c.b]) {
      const listed = await c.call(via, 'GET', `/agents/${onA.agentId}/tunnels`);
      expect(listed.json.map((t: { tunnel_id: string; proxy_host: string }) => [t.tunnel_id, t.proxy_host])).toEqual([[tunnel.tunnel_id, '127.0.0.1']]);
    }

    // Bytes straight through the proxy port at proxy_host:proxy_port.
    const direct = randomBytes(200_000);
    expect((await exchange(await tcpConnect(tunnel.proxy_host, tunnel.proxy_port), direct)).equals(direct)).toBe(true);

    // Bytes through the proxy WebSocket of either instance (b forwards to a over HTTP, not NATS).
    for (const via of [c.b, c.a]) {
      const ws = await openProxy(via, tunnel.tunnel_id, apiKey(c.adminKey));
      expect(ws).toBeInstanceOf(WebSocket);
      const payload = randomBytes(3 * 1024 * 1024 + 5);
      expect((await exchange(createWebSocketStream(ws as WebSocket), payload)).equals(payload), `through ${via.id}`).toBe(true);
    }
    // The credentials may also ride in the query, as browsers must send them; b passes them on.
    const byQuery = await openProxy(c.b, `${tunnel.tunnel_id}?api_key=${encodeURIComponent(c.adminKey)}`, {});
    expect(byQuery).toBeInstanceOf(WebSocket);
    (byQuery as WebSocket).terminate();

    // Only the opener: another write key is refused before the upgrade through either instance.
    expect(await openProxy(c.b, tunnel.tunnel_id, apiKey(otherKey))).toBe(403);
    expect(await openProxy(c.a, tunnel.tunnel_id, apiKey(otherKey))).toBe(403);
    expect(await openProxy(c.b, tunnel.tunnel_id, apiKey('rmm_not-a-key'))).toBe(401);
    expect(await openProxy(c.b, 'deadbeef00', apiKey(c.adminKey))).toBe(404);

    // Closed through b: a's port stops accepting, and neither instance lists or knows the tunnel.
    const closed = await c.call(c.b, 'DELETE', `/agents/${onA.agentId}/tunnel/${tunnel.tunnel_id}`);
    expect(closed.status, JSON.stringify(closed.json)).toBe(200);
    await expect(tcpConnect(tunnel.proxy_host, tunnel.proxy_port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect((await c.call(c.a, 'GET', `/agents/${onA.agentId}/tunnels`)).json).toEqual([]);
    expect((await c.call(c.b, 'DELETE', `/agents/${onA.agentId}/tunnel/${tunnel.tunnel_id}`)).status).toBe(404);
    expect(await openProxy(c.b, tunnel.tunnel_id, apiKey(c.adminKey))).toBe(404);
  });

  it('refuses the proxy port to addresses outside allow_from, and a plain request through b answers as a would', async () => {
    const opened = await c.call(c.b, 'POST', `/agents/${onA.agentId}/tunnel`, { target_host: '127.0.0.1', target_port: echoPort, allow_from: ['10.9.8.7'] });
    expect(opened.status).toBe(201);
    expect(opened.json.allow_from).toEqual(['10.9.8.7']);
    // a resets a connection from 127.0.0.1 before the agent hears of it.
    const outcome = await new Promise<string>((resolve) => {
      const socket = net.connect(opened.json.proxy_port, opened.json.proxy_host);
      socket.on('data', () => resolve('data'));
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      socket.on('close', () => resolve('closed'));
      socket.write('hello');
    });
    expect(outcome).toBe('ECONNRESET');
    expect((await c.call(c.b, 'GET', `/agents/${onA.agentId}/tunnels`)).json[0].refused_connections).toBe(1);
    const plain = await fetch(`${c.b.api}/proxy/${opened.json.tunnel_id}`, { headers: apiKey(otherKey) });
    expect(plain.status).toBe(403);
    expect(((await plain.json()) as { code: string }).code).toBe('FORBIDDEN');
    const upgradeNeeded = await fetch(`${c.b.api}/proxy/${opened.json.tunnel_id}`, { headers: apiKey(c.adminKey) });
    expect(upgradeNeeded.status).toBe(426);
    expect((await c.call(c.b, 'DELETE', `/agents/${onA.agentId}/tunnel/${opened.json.tunnel_id}`)).status).toBe(200);
  });

  it('tells the terminal which instance its shell runs on, before any output', async () => {
    const login = await fetch(`${c.b.api}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'cluster-admin-password' }),
    });
    const { token } = (await login.json()) as { token: string };
    for (const via of [c.a, c.b]) {
      const ws = new WebSocket(`${via.url.replace('http:', 'ws:')}/api/v1/terminal?token=${encodeURIComponent(token)}`);
      const first = await new Promise<{ text: string; binary: boolean }>((resolve, reject) => {
        ws.once('message', (data, binary) => resolve({ text: data.toString(), binary }));
        ws.once('error', reject);
      });
      ws.terminate();
      expect(first).toEqual({ text: JSON.stringify({ type: 'instance', instance_id: via.id }), binary: false });
    }
  });
});
