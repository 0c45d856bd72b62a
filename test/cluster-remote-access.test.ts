// Remote access in cluster mode (issue 60), with real parts: two server processes on one PostgreSQL
// database and a nats-server of the test's own, a reference agent connected to instance a, and every
// call made through instance b. The launchers' requests are forwarded to a (the tunnel must live where
// the agent's socket is), the desktop's WebSocket follows the tunnel there, and an RDP or web-interface
// tunnel lets in the address of the client that asked b, not b's own. PostgreSQL pass only.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import type { ReferenceAgent } from '../src/agent/reference-agent.js';
import { startClusterPair, type ClusterPair } from './helpers/cluster-instances.js';
import { clusterToolsSkip, startNats } from './helpers/cluster-rig.js';
import { testDbKind } from './helpers/db.js';
import { PROCESS_TEST_TIMEOUT_MS } from './helpers/spawn-server.js';
import { TunnelTargets } from './helpers/tunnels.js';
import { CLIENT_HANDSHAKE, rfb, SERVER_HANDSHAKE_BYTES, VncTarget } from './helpers/vnc-target.js';

const rig = clusterToolsSkip('cluster mode: remote access follows the instance holding the agent');

describe.skipIf(testDbKind() !== 'postgres' || rig.skip)(rig.title, { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let c: ClusterPair;
  let onA: ReferenceAgent;
  let token: string;
  const vnc = new VncTarget();
  const targets = new TunnelTargets();

  beforeAll(async () => {
    nats = await startNats();
    c = await startClusterPair(nats.url);
    onA = await c.startAgent(c.a.url, 'remote-access-on-a');
    const login = await fetch(`${c.b.api}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'cluster-admin-password' }),
    });
    token = ((await login.json()) as { token: string }).token;
    expect((await c.call(c.b, 'PUT', `/agents/${onA.agentId}/remote-access`, { vnc_port: await vnc.listen() })).status).toBe(200);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(async () => {
    await c?.close();
    await nats?.stop();
    await vnc.close();
    await targets.close();
  });

  const asUser = (route: string, body: object) =>
    fetch(`${c.b.api}${route}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('opens a desktop through the instance without the agent, and carries RFB over its WebSocket there', async () => {
    const res = await asUser(`/agents/${onA.agentId}/desktop`, {});
    expect(res.status, await res.clone().text()).toBe(201);
    const desktop = (await res.json()) as { tunnel_id: string; websocket_path: string };
    // Counted before the socket opens: the tunnel may reach the VNC server before 'open' is seen here.
    const before = vnc.connections;
    const ws = new WebSocket(`${c.b.url.replace('http:', 'ws:')}${desktop.websocket_path}?token=${token}`);
    // Listen before 'open': the server's greeting can arrive with the upgrade's response, and ws emits it
    // before an await after 'open' resumes (this test hung for its whole timeout in CI that way).
    let got = 0;
    const handshake = new Promise<void>((resolve) => ws.on('message', (data: Buffer) => (got += data.length) >= SERVER_HANDSHAKE_BYTES && resolve()));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('unexpected-response', (_req, r) => reject(new Error(`refused: ${r.statusCode}`)));
      ws.once('error', reject);
    });
    ws.send(CLIENT_HANDSHAKE);
    await handshake;
    const input = [rfb.setEncodings(), rfb.key(true, 0x61), rfb.updateRequest()];
    for (const m of input) ws.send(m);
    await vi.waitFor(() => expect(Buffer.concat(vnc.received[before] ?? [])).toEqual(Buffer.concat(input)), { timeout: 10_000 });
    ws.close();
    await vi.waitFor(async () => expect((await c.call(c.b, 'GET', `/agents/${onA.agentId}/tunnels`)).json).toEqual([]), { timeout: 10_000 });
  });

  it("opens a web-interface tunnel on the agent's instance for the address that asked, not the forwarding instance's", async () => {
    const port = await targets.echo();
    const res = await asUser(`/agents/${onA.agentId}/web-interface`, { port });
    expect(res.status, await res.clone().text()).toBe(201);
    const { tunnel, url } = (await res.json()) as { tunnel: { proxy_port: number; allow_from: string[]; tunnel_id: string }; url: string };
    expect(tunnel.allow_from).toEqual(['127.0.0.1']);
    expect(url).toBe(`https://127.0.0.1:${tunnel.proxy_port}/`);
    const listed = await c.call(c.a, 'GET', `/agents/${onA.agentId}/tunnels`);
    expect(listed.json.map((t: { tunnel_id: string }) => t.tunnel_id)).toContain(tunnel.tunnel_id);
  });
});
