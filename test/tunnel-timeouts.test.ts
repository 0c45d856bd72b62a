// The tunnel rules that run on time (contract §8), on a FakeClock: a tunnel without sessions closes
// after 30 minutes and frees its port, while one in use stays; and a client that takes nothing for 10 s
// while holding the agent's socket paused is cut off, so the agent and its other sessions go on.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { BACKGROUND_LOOPS } from './helpers/app.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';
import { connect, exchange, MiB, openTunnel, sha, tunnelsOf, TunnelTargets } from './helpers/tunnels.js';

const targets = new TunnelTargets();
afterAll(() => targets.close());

async function setUp(clock: FakeClock, backgroundJobs: boolean): Promise<{ s: LiveServer; headers: Record<string, string>; agent: LiveAgent }> {
  const s = await startLiveServer({ clock, backgroundJobs, captureLogs: true });
  const admin = bearer(await adminToken(s));
  const agentKey = (await createKey(s.app, admin, 'agent')).key;
  const headers = apiKey((await createKey(s.app, admin, 'write')).key);
  return { s, headers, agent: await s.startAgent(agentKey, { name: 'fw-timeouts' }) };
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

describe('a client that stops reading', () => {
  const clock = new FakeClock('2026-05-04T08:00:00Z');
  let t: Awaited<ReturnType<typeof setUp>>;
  beforeAll(async () => {
    t = await setUp(clock, false);
  });
  afterAll(() => t?.s.close());

  it('is cut off after 10 s of holding the agent paused; the agent and its other sessions go on', async () => {
    const chunk = randomBytes(MiB);
    const firehose = await targets.listen((socket) => {
      socket.on('error', () => undefined);
      const pump = () => {
        while (socket.writable) if (!socket.write(chunk)) return void socket.once('drain', pump);
      };
      pump();
    });
    const streaming = await openTunnel(t.s, t.headers, t.agent.id, firehose);
    const echo = await openTunnel(t.s, t.headers, t.agent.id, await targets.echo());

    const stuck = await connect(streaming.proxy_port);
    stuck.pause(); // takes nothing
    // Wait until the stream has stalled: bytes_out stops growing because nobody reads.
    let last = -1;
    for (let stable = 0; stable < 3; ) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const out = (await tunnelsOf(t.s, t.headers, t.agent.id)).find((x) => x.tunnel_id === streaming.tunnel_id)?.bytes_out ?? 0;
      stable = out === last ? stable + 1 : 0;
      last = out;
    }
    const other = exchange(await connect(echo.proxy_port), Buffer.from('still here?'));

    // Meanwhile a session of another tunnel waits: the agent's answer to its connect is not read yet.
    await clock.advance(9_000);
    expect((await tunnelsOf(t.s, t.headers, t.agent.id)).find((x) => x.tunnel_id === streaming.tunnel_id)?.sessions).toBe(1);
    await clock.advance(1_000);
    await vi.waitFor(async () => expect((await tunnelsOf(t.s, t.headers, t.agent.id)).find((x) => x.tunnel_id === streaming.tunnel_id)?.sessions).toBe(0));
    expect((await other).toString()).toBe('still here?'); // connected within its 15 s, and echoed
    // The stuck client, reading at last, finds its connection ended after part of the stream.
    let received = 0;
    stuck.on('data', (c: Buffer) => (received += c.length)).on('error', () => undefined);
    stuck.resume();
    await new Promise((resolve) => stuck.once('close', resolve));
    expect(received).toBeGreaterThan(0);
    expect(received).toBeLessThan(64 * MiB);
    expect(t.s.logs().some((line) => line.includes('its client took nothing for 10 s'))).toBe(true);

    const answer = await t.s.app.inject({ method: 'POST', url: `/api/v1/agents/${t.agent.id}/exec`, headers: t.headers, payload: { command: 'echo connected' } });
    expect(answer.json()).toMatchObject({ exit_code: 0, stdout: 'connected\n' });
  }, 60_000);
});
