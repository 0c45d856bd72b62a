// A tunnel client that stops reading (issue 29): it must never take a cut for the end of the stream. With
// an agent that can pause one session (tunnel_pause/tunnel_resume, the reference agent) the client gets
// every byte however long it stalls, and the server holds a bounded amount meanwhile; with an agent that
// cannot (an older one answering `unknown command`) the server holds at most 8 MiB and then resets the
// client, and bytes_out says exactly what the client got. Either way the agent's commands and its other
// sessions go on during the stall. Real parts throughout: TCP targets and clients, the reference agent
// over a real WebSocket, the proxy WebSocket; the CLI's relay against a `ws` server playing the proxy.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { exposeTunnel } from '../src/modules/tunnels/tunnel-client.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';
import { connect, exchange, MiB, openTunnel, sha, stalledClient, tunnelsOf, TunnelTargets, type TunnelDto } from './helpers/tunnels.js';

const STREAM_MIB = 128;
/** The stream's MiB number i: a random MiB stamped with i, so lost, doubled or reordered MiBs change the hash. */
const base = Buffer.from(createHash('sha512').update('stall').digest()).toString('hex').repeat(MiB / 128);
const mibOf = (i: number) => {
  const chunk = Buffer.from(base, 'latin1');
  chunk.writeUInt32BE(i, 0);
  return chunk;
};
const streamHash = (() => {
  const hash = createHash('sha256');
  for (let i = 0; i < STREAM_MIB; i++) hash.update(mibOf(i));
  return hash.digest('hex');
})();

let s: LiveServer;
let key: string;
let pausing: LiveAgent;
let old: LiveAgent;
/** Per connection: first byte 'S' streams STREAM_MIB MiB and closes; 'E' echoes everything, the 'E' too. */
let targetPort: number;
const targets = new TunnelTargets();

beforeAll(async () => {
  s = await startLiveServer({ captureLogs: true });
  const token = await adminToken(s);
  const agentKey = (await createKey(s.app, bearer(token), 'agent')).key;
  key = (await createKey(s.app, bearer(token), 'write')).key;
  pausing = await s.startAgent(agentKey, { name: 'fw-pausing' });
  old = await s.startAgent(agentKey, { name: 'fw-old', withoutCommands: ['tunnel_pause', 'tunnel_resume'] });
  targetPort = await targets.listen((socket) => {
    socket.on('error', () => undefined);
    socket.once('data', (first: Buffer) => {
      if (first[0] === 0x45 /* E */) {
        socket.write(first);
        socket.pipe(socket);
        return;
      }
      let i = 0;
      const pump = () => {
        while (i < STREAM_MIB) if (!socket.write(mibOf(i++))) return void socket.once('drain', pump);
        socket.end();
      };
      pump();
    });
  });
}, 60_000);
afterAll(async () => {
  await s?.close();
  await targets.close();
});

const listed = async (agent: LiveAgent, tunnelId: string) => (await tunnelsOf(s, apiKey(key), agent.id)).find((t) => t.tunnel_id === tunnelId)!;
const slow = { timeout: 60_000, interval: 50 };

/** Waits for the server's warning that it reset a session of the tunnel, and says why it did. */
async function untilCut(tunnelId: string): Promise<string> {
  return vi.waitFor(() => {
    const line = s.logs().find((l) => l.includes(tunnelId) && l.includes('tunnel session reset'));
    if (!line) throw new Error('not cut yet');
    return line;
  }, slow);
}

/** Runs a command on the agent and a second session through the tunnel while the first client stalls. */
async function agentStillServes(agent: LiveAgent, tunnel: TunnelDto): Promise<void> {
  const exec = await s.app.inject({ method: 'POST', url: `/api/v1/agents/${agent.id}/exec`, headers: apiKey(key), payload: { command: 'echo during-stall' } });
  expect(exec.statusCode, exec.body).toBe(200);
  expect(exec.json()).toMatchObject({ exit_code: 0, stdout: 'during-stall\n' });
  const echoed = await exchange(await connect(tunnel.proxy_port), ECHO);
  expect(sha(echoed)).toBe(sha(ECHO));
}

/** What the second session sends and gets back. */
const ECHO = Buffer.concat([Buffer.from('E'), Buffer.alloc(MiB, 7)]);

describe('with an agent that pauses sessions', () => {
  it('delivers every byte after a long stall, holding a bounded amount meanwhile', async () => {
    const tunnel = await openTunnel(s, apiKey(key), pausing.id, targetPort);
    const client = await connect(tunnel.proxy_port);
    client.pause();
    client.write('S');

    // The stall: the agent holds the target, so the server's backlog stops growing well below the stream.
    await vi.waitFor(async () => expect(await listed(pausing, tunnel.tunnel_id)).toMatchObject({ sessions: 1, paused_sessions: 1 }), slow);
    let peak = 0;
    let last = -1;
    for (let stable = 0; stable < 5; ) {
      const now = (await listed(pausing, tunnel.tunnel_id)).buffered_bytes!;
      peak = Math.max(peak, now);
      stable = now === last ? stable + 1 : 0;
      last = now;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(peak).toBeGreaterThan(MiB);
    expect(peak).toBeLessThan(32 * MiB);

    await agentStillServes(pausing, tunnel);
    // Still stalled: the streaming session is open and held; nothing was cut while the command ran.
    expect(await listed(pausing, tunnel.tunnel_id)).toMatchObject({ paused_sessions: 1 });
    expect((await listed(pausing, tunnel.tunnel_id)).bytes_out).toBeLessThan(STREAM_MIB * MiB);

    const hash = createHash('sha256');
    let received = 0;
    client.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      received += chunk.length;
    });
    const ended = new Promise<string>((resolve) => {
      client.once('end', () => resolve('EOF'));
      client.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
    client.resume();
    expect(await ended).toBe('EOF');
    expect(received).toBe(STREAM_MIB * MiB);
    expect(hash.digest('hex')).toBe(streamHash);
    client.destroy();
    await vi.waitFor(async () => expect(await listed(pausing, tunnel.tunnel_id)).toMatchObject({ sessions: 0, bytes_out: STREAM_MIB * MiB + ECHO.length }), slow);
  }, 120_000);
});

describe('with an agent that cannot pause sessions', () => {
  it('resets a stalled client after 8 MiB, and bytes_out is exactly what the client got', async () => {
    const tunnel = await openTunnel(s, apiKey(key), old.id, targetPort);
    const client = stalledClient(tunnel.proxy_port, Buffer.from('S'));
    expect(await untilCut(tunnel.tunnel_id)).toContain('the agent cannot pause one session (no tunnel_pause), so at most 8 MiB wait for a client');
    expect(await listed(old, tunnel.tunnel_id)).toMatchObject({ sessions: 0 });

    await agentStillServes(old, tunnel);
    client.resume();
    expect(await client.ended).toBe('ECONNRESET');
    expect(client.received()).toBeGreaterThan(0);
    expect(client.received()).toBeLessThan(16 * MiB);
    expect((await listed(old, tunnel.tunnel_id)).bytes_out).toBe(client.received() + ECHO.length);
  }, 120_000);

  it('closes a stalled proxy WebSocket with an error code after 8 MiB, never a normal close', async () => {
    const tunnel = await openTunnel(s, apiKey(key), old.id, targetPort);
    const ws = new WebSocket(`${s.url.replace('http:', 'ws:')}${tunnel.proxy_path}`, { headers: apiKey(key) });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(Buffer.from('S'));
    ws.pause();
    let received = 0;
    ws.on('message', (data: Buffer) => (received += data.length));
    const closed = new Promise<[number, string]>((resolve) => ws.once('close', (code, reason) => resolve([code, reason.toString()])));
    await untilCut(tunnel.tunnel_id);
    ws.resume();
    const [code, reason] = await closed;
    expect(code).toBe(4413);
    expect(reason).toMatch(/did not take/);
    expect(received).toBeGreaterThan(0);
    expect((await listed(old, tunnel.tunnel_id)).bytes_out).toBe(received);
  }, 120_000);

});

describe('`tunnel connect` (the CLI\'s relay)', () => {
  /** A stand-in for the server's proxy WebSocket: sends `bytes` to each client, then closes with `code`. */
  async function proxyThatCloses(bytes: number, code: number): Promise<string> {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise((resolve) => wss.once('listening', resolve));
    wss.on('connection', (ws) => ws.send(Buffer.alloc(bytes, 1), () => ws.close(code, code === 1000 ? 'the target closed the connection' : 'too slow')));
    cleanups.push(() => new Promise((resolve) => wss.close(resolve)));
    return `http://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  }
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(() => Promise.all(cleanups.map((c) => c())));

  async function throughCli(serverUrl: string): Promise<{ ended: string; received: number; lines: string[] }> {
    const lines: string[] = [];
    const cli = await exposeTunnel({ serverUrl, tunnelId: 'abc', listen: { host: '127.0.0.1', port: 0 }, credentials: { apiKey: 'k' }, report: (l) => lines.push(l) });
    try {
      const client = stalledClient(cli.address.port, Buffer.from('S'));
      await vi.waitFor(() => expect(lines.join('\n')).toMatch(/session (closed|cut)/), slow);
      client.resume();
      return { ended: await client.ended, received: client.received(), lines };
    } finally {
      await cli.close();
    }
  }

  it('resets the local connection when the server cuts the session, while the local client still stalls', async () => {
    const { ended, received, lines } = await throughCli(await proxyThatCloses(64 * 1024, 4413));
    expect(ended).toBe('ECONNRESET');
    expect(received).toBeLessThanOrEqual(64 * 1024);
    expect(lines.join('\n')).toContain('session cut by the server (4413: too slow); resetting the local connection');
  });

  it('ends the local connection in order after the last byte when the target closed', async () => {
    const { ended, received } = await throughCli(await proxyThatCloses(64 * 1024, 1000));
    expect(ended).toBe('EOF');
    expect(received).toBe(64 * 1024);
  });
});
