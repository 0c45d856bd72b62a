// A live server for agent-hub tests: the real app listening on 127.0.0.1:0, the project's reference agent
// running in-process against it, and raw `ws` sockets for peers that misbehave. Everything started here
// is tracked, and close() stops agents and sockets before the app, so nothing is left running.
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect, vi } from 'vitest';
import WebSocket, { type ClientOptions } from 'ws';
import { ReferenceAgent, type ReferenceAgentOptions } from '../../src/agent/reference-agent.js';
import { knownCapabilities } from '../../src/modules/agent-hub/device-protocol.js';
import { buildTestApp, type TestApp, type TestAppOptions } from './app.js';
import { apiKey } from './identity.js';

export interface LiveServer extends TestApp {
  /** http://127.0.0.1:<port> */
  url: string;
  /** ws://127.0.0.1:<port>/api/v1/agent/ws?agent_id=<id> (plus `extra` query parameters). */
  socketUrl(agentId: string, extra?: Record<string, string>): string;
  /** Starts a reference agent against this server and waits until its socket is open. */
  startAgent(key: string, options?: Partial<ReferenceAgentOptions>): Promise<LiveAgent>;
  /** Opens a raw socket as `agentId` with `key`; rejects with the HTTP status when refused. */
  openRaw(agentId: string, key: string, options?: ClientOptions): Promise<RawPeer>;
  /** Registers an agent over REST (no socket) and returns its id. */
  /** Registers over HTTP (no socket); `platform` linux unless given (backups are for firewalls: freebsd). */
  register(key: string, hostname: string, agentId?: string, platform?: 'linux' | 'freebsd' | 'windows'): Promise<string>;
}

export interface LiveAgent {
  agent: ReferenceAgent;
  id: string;
  /** Names of the commands the agent has answered, in order; not checks_set, which every agent with checks gets whenever its set changes. */
  commands: string[];
  stop(): Promise<void>;
}

export interface RawPeer {
  ws: WebSocket;
  /** Text frames received, parsed. */
  frames: Array<Record<string, unknown>>;
  pings: number;
  /** Resolves with the close code once the socket is closed. */
  closed: Promise<number>;
  /** The next (or an already received, not yet taken) command frame. */
  nextCommand(): Promise<{ id: string; command: string; params: Record<string, unknown> }>;
}

export async function startLiveServer(options: TestAppOptions = {}): Promise<LiveServer> {
  const t = await buildTestApp(options);
  await t.app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const agents = new Set<LiveAgent>();
  const peers = new Set<RawPeer>();

  const socketUrl = (agentId: string, extra: Record<string, string> = {}) =>
    `ws://127.0.0.1:${port}/api/v1/agent/ws?${new URLSearchParams({ agent_id: agentId, ...extra }).toString()}`;

  async function startAgent(key: string, agentOptions: Partial<ReferenceAgentOptions> = {}): Promise<LiveAgent> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-agent-'));
    const agent = new ReferenceAgent({
      serverUrl: url,
      apiKey: key,
      stateFile: path.join(dir, 'state.json'),
      platform: 'linux',
      hostname: 'pve-test',
      heartbeatIntervalMs: 3_600_000,
      collectSystem: () => ({ cpu: { usage_percent: 3 } }),
      backoff: { initialMs: 100, maxMs: 1000 },
      rebootDowntimeMs: 200,
      ...agentOptions,
    });
    const commands: string[] = [];
    let setsTaken = 0;
    agent.on('command', (c) => (c.command === 'checks_set' ? setsTaken++ : commands.push(c.command)));
    const live: LiveAgent = {
      agent,
      get id() {
        return agent.agentId ?? '';
      },
      commands,
      stop: async () => {
        agents.delete(live);
        await agent.stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
    agents.add(live);
    await agent.start();
    await vi.waitFor(() => expect(agent.connected).toBe(true), { timeout: 10_000 });
    // What its hello announced is on its record (written after the socket opened): device routes read it there.
    // The record holds the capabilities this server knows (the agent may announce newer ones, such as checks).
    const announced = [...knownCapabilities(agent.capabilities())].sort();
    await vi.waitFor(
      async () => {
        const row = await t.db.db.selectFrom('agents').select('capabilities').where('id', '=', live.id).executeTakeFirst();
        expect([...(row?.capabilities ?? [])].sort()).toEqual(announced);
      },
      { timeout: 10_000 },
    );
    // An agent with checks gets its set as soon as it connects: once that is answered, the commands a test sends come after it.
    if (announced.includes('checks')) await vi.waitFor(() => expect(setsTaken).toBeGreaterThan(0), { timeout: 10_000 });
    return live;
  }

  function openRaw(agentId: string, key: string, wsOptions: ClientOptions = {}): Promise<RawPeer> {
    const ws = new WebSocket(socketUrl(agentId), { headers: apiKey(key), ...wsOptions });
    const waiting: Array<(frame: Record<string, unknown>) => void> = [];
    const unread: Array<Record<string, unknown>> = [];
    const peer: RawPeer = {
      ws,
      frames: [],
      pings: 0,
      closed: new Promise((resolve) => ws.on('close', (code) => resolve(code))),
      nextCommand: () => new Promise((resolve) => (unread.length > 0 ? resolve(unread.shift() as never) : waiting.push(resolve as never))),
    };
    ws.on('ping', () => peer.pings++);
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const frame = JSON.parse(data.toString()) as Record<string, unknown>;
      peer.frames.push(frame);
      if (frame.type !== 'command') return;
      const take = waiting.shift();
      if (take) take(frame);
      else unread.push(frame);
    });
    void peer.closed.then(() => peers.delete(peer));
    return new Promise((resolve, reject) => {
      ws.on('unexpected-response', (req, res) => {
        req.destroy();
        reject(new Error(`socket refused with ${res.statusCode}`));
      });
      ws.on('error', reject);
      ws.on('open', () => {
        peers.add(peer);
        resolve(peer);
      });
    });
  }

  async function register(key: string, hostname: string, agentId?: string, platform: 'linux' | 'freebsd' | 'windows' = 'linux'): Promise<string> {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/agent/register',
      headers: apiKey(key),
      payload: { hostname, platform, ...(agentId ? { agent_id: agentId } : {}) },
    });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { agent_id: string }).agent_id;
  }

  return {
    ...t,
    url,
    socketUrl,
    startAgent,
    openRaw,
    register,
    close: async () => {
      await Promise.all([...agents].map((a) => a.stop()));
      for (const peer of peers) peer.ws.terminate();
      await t.close();
    },
  };
}
