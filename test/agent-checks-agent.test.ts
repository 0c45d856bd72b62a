// The reference agent with checks (issue 61), end to end over its real WebSocket: it announces `checks`,
// answers checks_set (refusing a malformed set and keeping the old one), sends check_results with the
// set's version and a state change when a listener the test closes goes away, keeps the set across a
// restart and runs it before any server is reached. The server here is a small protocol peer (register,
// heartbeat, the agent socket) because these cases are what the real server never sends: a malformed
// set, and checks_set to an agent that did not announce checks. The agent with the real server, its
// policies and plugins: checks-reference-agent.test.ts.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { ReferenceAgent, type ReferenceAgentOptions } from '../src/agent/reference-agent.js';
import { checkResultsFrameSchema, type AgentCheck, type CheckResult, type CheckResultsFrame } from '../src/modules/checks/check-protocol.js';

interface Peer {
  url: string;
  frames: Array<Record<string, unknown>>;
  socket: () => WebSocket | null;
  command: (command: string, params: unknown) => Promise<Record<string, unknown>>;
  close: () => Promise<void>;
}

async function startPeer(): Promise<Peer> {
  const frames: Array<Record<string, unknown>> = [];
  let current: WebSocket | null = null;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const body = req.url === '/api/v1/agent/register' ? { agent_id: 'a'.repeat(32) } : { ok: true };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  const wss = new WebSocketServer({ server, path: '/api/v1/agent/ws' });
  wss.on('connection', (ws) => {
    current = ws;
    ws.on('message', (data) => frames.push(JSON.parse(String(data)) as Record<string, unknown>));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    frames,
    socket: () => current,
    async command(command, params) {
      const id = randomUUID();
      current!.send(JSON.stringify({ type: 'command', id, command, params }));
      let answer: Record<string, unknown> | undefined;
      await vi.waitFor(() => expect((answer = frames.find((f) => f.type === 'response' && f.id === id))).toBeDefined(), { timeout: 10_000 });
      return answer!;
    },
    async close() {
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const listening = (server: net.Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

let tmp: string;
const agents: ReferenceAgent[] = [];

function agentOptions(serverUrl: string): ReferenceAgentOptions {
  return {
    serverUrl,
    apiKey: 'test-key',
    stateFile: path.join(tmp, 'agent-state.json'),
    collectSystem: () => ({}),
    backoff: { initialMs: 100, maxMs: 500 },
    checks: { changeReportDelayMs: 100, reportIntervalMs: 1000, firstRunMaxDelayMs: 100 },
  };
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'agent-checks-agent-'));
});
afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  await rm(tmp, { recursive: true, force: true });
});

const resultsOf = (frames: Array<Record<string, unknown>>, checkId: string) =>
  frames.filter((f) => f.type === 'check_results').flatMap((f) => (f as unknown as CheckResultsFrame).results.map((r) => ({ version: (f as unknown as CheckResultsFrame).version, ...r }))).filter((r) => r.check_id === checkId);

describe('a reference agent with checks', () => {
  it('announces checks, runs the set it is sent, reports a state change, and keeps the set across a restart', async () => {
    const peer = await startPeer();
    const target = net.createServer((socket) => socket.end());
    const port = await listening(target);
    const agent = new ReferenceAgent(agentOptions(peer.url));
    agents.push(agent);
    await agent.start();
    await vi.waitFor(() => expect(peer.frames.find((f) => f.type === 'hello')).toBeDefined(), { timeout: 10_000 });
    expect(peer.frames.find((f) => f.type === 'hello')!.capabilities).toContain('checks');
    expect(agent.checkSet).toBeNull();

    const tcp: AgentCheck = { id: randomUUID(), name: 'port open', kind: 'tcp', params: { host: '127.0.0.1', port }, interval_seconds: 10, timeout_seconds: 5 };
    const malformed = await peer.command('checks_set', { version: 'v0', checks: [{ ...tcp, interval_seconds: 1 }] });
    expect(malformed).toMatchObject({ success: false, error: expect.stringContaining('invalid params for checks_set: checks.0.interval_seconds') });
    expect(agent.checkSet).toBeNull();

    expect(await peer.command('checks_set', { version: 'v1', checks: [tcp] })).toEqual({ type: 'response', id: expect.any(String), success: true, data: { version: 'v1' } });
    await vi.waitFor(() => expect(resultsOf(peer.frames, tcp.id)[0]).toEqual(expect.objectContaining({ version: 'v1', state: 0, output: expect.stringMatching(/^TCP OK - /) })), { timeout: 15_000 });
    // A malformed set later leaves the running one in place.
    expect((await peer.command('checks_set', { version: 'v2', checks: 'none' })).success).toBe(false);
    expect(agent.checkSet?.version).toBe('v1');
    const saved = JSON.parse(await readFile(agent.checksFile!, 'utf8')) as { version: string };
    expect(saved.version).toBe('v1');
    expect(agent.checksFile).toBe(path.join(tmp, 'agent-state.checks.json'));

    // The listener goes: the next run (about 10 s later) is CRITICAL, and is sent as a change.
    await new Promise<void>((resolve) => target.close(() => resolve()));
    await vi.waitFor(() => expect(resultsOf(peer.frames, tcp.id).map((r) => r.state)).toContain(2), { timeout: 30_000, interval: 200 });
    // Every frame is one the server's schema accepts.
    const sent = peer.frames.filter((f) => f.type === 'check_results');
    expect(sent.map((f) => checkResultsFrameSchema.safeParse(f).success)).toEqual(sent.map(() => true));
    await agent.stop();
    await peer.close();

    // Restarted with no server to reach: the saved set runs anyway.
    const offline = net.createServer();
    const deadPort = await listening(offline);
    await new Promise<void>((resolve) => offline.close(() => resolve()));
    const again = new ReferenceAgent(agentOptions(`http://127.0.0.1:${deadPort}`));
    agents.push(again);
    const results: CheckResult[] = [];
    again.on('check_result', (r) => results.push(r));
    void again.start();
    await vi.waitFor(() => expect(results.map((r) => [r.check_id, r.state])[0]).toEqual([tcp.id, 2]), { timeout: 15_000 });
    expect(again.checkSet?.version).toBe('v1');
    expect(again.connected).toBe(false);
    await again.stop();
  });

  it('an agent told to play one without checks neither announces nor answers them', async () => {
    const peer = await startPeer();
    const agent = new ReferenceAgent({ ...agentOptions(peer.url), stateFile: path.join(tmp, 'old-agent.json'), checks: false });
    agents.push(agent);
    await agent.start();
    await vi.waitFor(() => expect(peer.frames.find((f) => f.type === 'hello')).toBeDefined(), { timeout: 10_000 });
    expect(peer.frames.find((f) => f.type === 'hello')!.capabilities).not.toContain('checks');
    expect(await peer.command('checks_set', { version: 'v1', checks: [] })).toMatchObject({ success: false, error: 'unknown command checks_set' });
    expect(agent.checksFile).toBeNull();
    expect(existsSync(path.join(tmp, 'old-agent.checks.json'))).toBe(false);
    await agent.stop();
    await peer.close();
  });
});
