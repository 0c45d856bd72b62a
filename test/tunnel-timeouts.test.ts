// The tunnel rules that run on time (contract §8), on a FakeClock: a tunnel without sessions closes
// after 30 minutes and frees its port, while one in use stays; and an agent that does not answer its
// first tunnel_pause within 5 s counts as unable to pause, so a stalled client is then reset once more
// than 8 MiB wait for it.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { encodeTunnelFrame } from '../src/modules/agent-hub/agent-protocol.js';
import { FakeClock } from '../src/platform/clock.js';
import { BACKGROUND_LOOPS } from './helpers/app.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';
import { connect, exchange, MiB, openTunnel, sha, stalledClient, tunnelsOf, TunnelTargets } from './helpers/tunnels.js';

const targets = new TunnelTargets();
afterAll(() => targets.close());

async function setUp(clock: FakeClock, backgroundJobs: boolean): Promise<{ s: LiveServer; headers: Record<string, string>; agent: LiveAgent; agentKey: string }> {
  const s = await startLiveServer({ clock, backgroundJobs, captureLogs: true });
  const admin = bearer(await adminToken(s));
  const agentKey = (await createKey(s.app, admin, 'agent')).key;
  const headers = apiKey((await createKey(s.app, admin, 'write')).key);
  return { s, headers, agentKey, agent: await s.startAgent(agentKey, { name: 'fw-timeouts' }) };
}

describe('a tunnel without sessions', () => {
  const clock = new FakeClock('2026-05-04T08:00:00Z');
  let t: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    t = await setUp(clock, true);
  });
  afterAll(() => t?.s.close());

  /** Moves time on in keep-alive steps, letting the agent answer each ping so it stays connected. */
  async function advanceMinutes(minutes: number): Promise<void> {
    for (let step = 0; step < minutes * 2; step++) {
      await vi.waitFor(() => expect(clock.pendingSleepers).toBe(BACKGROUND_LOOPS));
      await clock.advance(30_000);
      const now = clock.now().toISOString();
      const status = async () => (await t.s.app.inject({ method: 'GET', url: '/api/v1/hub/status', headers: t.headers })).json() as { agents: Array<{ agent_id: string; last_seen: string }> };
      await vi.waitFor(async () => expect((await status()).agents.find((a) => a.agent_id === t.agent.id)?.last_seen).toBe(now));
    }
  }

  it('closes after 30 minutes and frees its port; one whose last session ended later lives 30 minutes from then', async () => {
    const echoPort = await targets.echo();
    const idle = await openTunnel(t.s, t.headers, t.agent.id, echoPort);
    const used = await openTunnel(t.s, t.headers, t.agent.id, echoPort);
    const open = async () => (await tunnelsOf(t.s, t.headers, t.agent.id)).map((x) => x.tunnel_id).sort();

    await advanceMinutes(20);
    const data = randomBytes(64 * 1024);
    expect(sha(await exchange(await connect(used.proxy_port), data))).toBe(sha(data)); // its last session ends at minute 20
    await vi.waitFor(async () => expect((await tunnelsOf(t.s, t.headers, t.agent.id)).find((x) => x.tunnel_id === used.tunnel_id)?.sessions).toBe(0));

    await advanceMinutes(9); // minute 29: both still open
    expect(await open()).toEqual([idle.tunnel_id, used.tunnel_id].sort());
    await advanceMinutes(2); // minute 31: the idle one is gone, its port free
    await vi.waitFor(async () => expect(await open()).toEqual([used.tunnel_id]));
    const probe = net.createServer();
    await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(idle.proxy_port, '127.0.0.1', resolve));
    await new Promise((resolve) => probe.close(resolve));

    await advanceMinutes(20); // minute 51: 31 minutes after its last session
    await vi.waitFor(async () => expect(await open()).toEqual([]));
  }, 60_000);
});

describe('an agent that never answers tunnel_pause', () => {
  const clock = new FakeClock('2026-05-04T08:00:00Z');
  let t: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    t = await setUp(clock, false);
  });
  afterAll(() => t?.s.close());

  it('counts as unable to pause after 5 s, and then a stalled client with more than 8 MiB waiting is reset', async () => {
    const id = await t.s.register(t.agentKey, 'fw-silent');
    const raw = await t.s.openRaw(id, t.agentKey); // plays an agent that ignores commands it does not know
    const tunnel = await openTunnel(t.s, t.headers, id, 9); // the raw peer never dials the target
    const client = stalledClient(tunnel.proxy_port, Buffer.from('hello'));
    const connect = await raw.nextCommand();
    expect(connect.command).toBe('tunnel_connect');
    raw.ws.send(JSON.stringify({ type: 'response', id: connect.id, success: true, data: {} }));
    const sessionId = String(connect.params.session_id);
    const chunk = Buffer.alloc(64 * 1024, 3);
    for (let sent = 0; sent < 20 * MiB; sent += chunk.length) raw.ws.send(encodeTunnelFrame(sessionId, chunk));

    const pause = await raw.nextCommand();
    expect(pause).toMatchObject({ command: 'tunnel_pause', params: { session_id: sessionId } });
    const listed = async () => (await tunnelsOf(t.s, t.headers, id)).find((x) => x.tunnel_id === tunnel.tunnel_id)!;
    // While the question is open the session lives on, holding what came (the agent might yet pause).
    await vi.waitFor(async () => expect((await listed()).buffered_bytes).toBeGreaterThan(8 * MiB), { timeout: 20_000 });
    expect(await listed()).toMatchObject({ sessions: 1, paused_sessions: 1 });

    await clock.advance(5_000);
    const disconnect = await raw.nextCommand();
    expect(disconnect).toMatchObject({ command: 'tunnel_disconnect', params: { session_id: sessionId } });
    client.resume();
    expect(await client.ended).toBe('ECONNRESET');
    expect(await listed()).toMatchObject({ sessions: 0, bytes_out: client.received() });
    expect(t.s.logs().some((line) => line.includes(tunnel.tunnel_id) && line.includes('no tunnel_pause'))).toBe(true);

    raw.ws.close();
  }, 60_000);
});
