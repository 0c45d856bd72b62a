// The agent socket against hostile peers (contract §5): refusals before the upgrade in the contract's error
// body, with the server closing the TCP connection itself; malformed, unknown, misdirected and oversized
// frames from raw `ws` clients, after which the server still serves the project's reference agent.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';

interface HubStatus {
  agents: Array<{ agent_id: string; pending_commands: number }>;
  pending_commands: number;
  dropped_frames: number;
  unknown_responses: number;
}

const MiB = 1024 * 1024;
let s: LiveServer;
const keys = { admin: '', agentA: '', agentB: '', agent: '', read: '', write: '' };
let agentOfA: string;
let good: LiveAgent;

beforeAll(async () => {
  s = await startLiveServer();
  const token = await adminToken(s);
  const admin = bearer(token);
  const [a, b] = [await createCustomer(s.app, token, 'H-100'), await createCustomer(s.app, token, 'H-200')];
  keys.admin = (await createKey(s.app, admin, 'admin')).key;
  keys.agentA = (await createKey(s.app, admin, 'agent', a.id)).key;
  keys.agentB = (await createKey(s.app, admin, 'agent', b.id)).key;
  keys.agent = (await createKey(s.app, admin, 'agent')).key;
  keys.read = (await createKey(s.app, admin, 'read')).key;
  keys.write = (await createKey(s.app, admin, 'write')).key;
  agentOfA = await s.register(keys.agentA, 'fw-customer-a');
  good = await s.startAgent(keys.agent, { name: 'pve-good' });
});
afterAll(() => s?.close());

const hub = async () => (await s.app.inject({ method: 'GET', url: '/api/v1/hub/status', headers: apiKey(keys.admin) })).json() as HubStatus;
const connected = async (id: string) =>
  ((await s.app.inject({ method: 'GET', url: `/api/v1/agents/${id}`, headers: apiKey(keys.admin) })).json() as { connected: boolean }).connected;
const exec = (id: string, command: string) =>
  s.app.inject({ method: 'POST', url: `/api/v1/agents/${id}/exec`, headers: apiKey(keys.write), payload: { command } });

/** The good reference agent still gets its commands through. */
async function expectServing(): Promise<void> {
  const res = await exec(good.id, 'echo still-serving');
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toMatchObject({ exit_code: 0, stdout: 'still-serving\n' });
}

/**
 * Tries to upgrade and returns the plain HTTP refusal. The request is deliberately not destroyed here:
 * the server must close the connection by itself, and a socket still open after 5 s fails the test.
 */
async function refusal(url: string, headers: Record<string, string> = {}) {
  const ws = new WebSocket(url, { headers });
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    ws.on('unexpected-response', (_req, response) => resolve(response));
    ws.on('open', () => reject(new Error('the server accepted the upgrade')));
    ws.on('error', reject);
  });
  const socket = res.socket as Socket;
  try {
    let text = '';
    for await (const chunk of res) text += String(chunk);
    await vi.waitFor(() => expect(socket.destroyed, 'the server left the refused connection open').toBe(true), { timeout: 5000 });
    return { status: res.statusCode, body: JSON.parse(text) as Record<string, unknown>, requestId: res.headers['x-request-id'] };
  } finally {
    socket.destroy();
  }
}

async function expectRefused(url: string, headers: Record<string, string>, status: number, code: string) {
  const refused = await refusal(url, headers);
  expect(refused.status).toBe(status);
  expect(refused.body).toEqual({ error: expect.any(String), code, request_id: refused.requestId, ...(status === 400 ? { details: expect.any(Array) } : {}) });
}

describe('refused before the upgrade', () => {
  it('answers 401/403/404/400 in the contract body and closes the connection itself', async () => {
    const unknown = 'cd'.repeat(16);
    await expectRefused(s.socketUrl(agentOfA), {}, 401, 'UNAUTHORIZED');
    await expectRefused(s.socketUrl(agentOfA), apiKey('rmm_not_a_key'), 401, 'UNAUTHORIZED');
    await expectRefused(s.socketUrl(agentOfA, { api_key: 'rmm_not_a_key' }), {}, 401, 'UNAUTHORIZED');
    await expectRefused(s.socketUrl(agentOfA), apiKey(keys.read), 403, 'FORBIDDEN');
    await expectRefused(s.socketUrl(agentOfA), apiKey(keys.agentB), 403, 'FORBIDDEN');
    await expectRefused(s.socketUrl(unknown), apiKey(keys.agentA), 404, 'NOT_FOUND');
    await expectRefused(s.socketUrl('not-a-hex-id!'), apiKey(keys.agentA), 400, 'VALIDATION_ERROR');

    // None of them got in; the right key in the query parameter does.
    expect((await hub()).agents.map((a) => a.agent_id)).toEqual([good.id]);
    const ws = new WebSocket(s.socketUrl(agentOfA, { api_key: keys.agentA }));
    const closed = new Promise<number>((resolve) => ws.on('close', resolve));
    await new Promise((resolve, reject) => ws.on('open', resolve).on('error', reject));
    await vi.waitFor(async () => expect(await connected(agentOfA)).toBe(true));
    ws.close(1000);
    expect(await closed).toBe(1000);
    await vi.waitFor(async () => expect(await connected(agentOfA)).toBe(false));
  });
});

/** Text frames no agent should send: each is dropped and counted, none closes the socket. */
const MALFORMED = [
  'not json {',
  '',
  '42',
  'null',
  '[]',
  '"response"',
  '{"type":"bogus","id":"1"}',
  '{"type":"response"}',
  '{"type":"response","id":"","success":true}',
  '{"type":"response","id":"1","success":"yes"}',
  '{"type":"command","id":"1","command":"exec","params":{"command":"id","timeout":5}}',
  '{"type":"tunnel_closed"}',
  `${'['.repeat(50_000)}${']'.repeat(50_000)}`,
];

describe('hostile frames', () => {
  it('drops malformed and unknown frames, ignores answers from the wrong socket, and keeps serving', async () => {
    const hostileId = await s.register(keys.agent, 'hostile');
    const victimId = await s.register(keys.agent, 'victim');
    const hostile = await s.openRaw(hostileId, keys.agent);
    const victim = await s.openRaw(victimId, keys.agent);
    const before = await hub();
    const counted = async (dropped: number, unknown: number) =>
      vi.waitFor(async () => {
        const now = await hub();
        expect([now.dropped_frames - before.dropped_frames, now.unknown_responses - before.unknown_responses]).toEqual([dropped, unknown]);
      });

    for (const frame of MALFORMED) hostile.ws.send(frame);
    // Binary frames too short for the session id they announce, or announcing none, are dropped and counted.
    hostile.ws.send(Buffer.from([0xff, 0x00, 0xde, 0xad, 0xbe, 0xef]), { binary: true });
    hostile.ws.send(Buffer.from([0x00, 0x41]), { binary: true });
    hostile.ws.send(Buffer.alloc(0), { binary: true });
    const malformed = MALFORMED.length + 3;
    hostile.ws.send(JSON.stringify({ type: 'response', id: 'no-such-command', success: true, data: {} }));
    hostile.ws.send('{"type":"response","id":"proto","success":true,"data":{"__proto__":{"polluted":true}}}');
    await counted(malformed, 2);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();

    // A command to the victim: its id, answered from the hostile socket, settles nothing.
    const pending = exec(victimId, 'hostname');
    const command = await victim.nextCommand();
    expect(command).toMatchObject({ type: 'command', command: 'exec', params: { command: 'hostname', timeout: 60 } });
    const forged = { type: 'response', id: command.id, success: true, data: { exit_code: 0, stdout: 'forged\n', stderr: '' } };
    hostile.ws.send(JSON.stringify(forged));
    hostile.ws.send(JSON.stringify({ type: 'response', id: command.id, success: false, error: 'forged failure' }));
    await counted(malformed, 4);
    expect((await hub()).agents.find((a) => a.agent_id === victimId)?.pending_commands).toBe(1);

    victim.ws.send(JSON.stringify({ ...forged, data: { exit_code: 0, stdout: 'victim-host\n', stderr: '' } }));
    const answer = await pending;
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toMatchObject({ exit_code: 0, stdout: 'victim-host\n' });
    // The same answer again is late: ignored and counted.
    victim.ws.send(JSON.stringify(forged));
    await counted(malformed, 5);

    expect(hostile.ws.readyState).toBe(WebSocket.OPEN);
    expect(await connected(hostileId)).toBe(true);
    await expectServing();
    expect((await hub()).pending_commands).toBe(0);
  });

  it('an answer of the wrong shape is 502 AGENT_ERROR, and an agent error is 502 with the agent\'s text', async () => {
    const id = await s.register(keys.agent, 'liar');
    const liar = await s.openRaw(id, keys.agent);
    const malformed = exec(id, 'true');
    liar.ws.send(JSON.stringify({ type: 'response', id: (await liar.nextCommand()).id, success: true, data: { exit_code: 'zero' } }));
    expectError(await malformed, 502, 'AGENT_ERROR');
    const failing = exec(id, 'true');
    liar.ws.send(JSON.stringify({ type: 'response', id: (await liar.nextCommand()).id, success: false, error: 'permission denied' }));
    expect(expectError(await failing, 502, 'AGENT_ERROR').error).toContain('permission denied');
    await expectServing();
  });

  it('reads a message of exactly 4 MiB, closes the socket of a larger one with 1009, and others keep working', async () => {
    const id = await s.register(keys.agent, 'flooder');
    const flooder = await s.openRaw(id, keys.agent);
    const before = await hub();
    flooder.ws.send('x'.repeat(4 * MiB));
    await vi.waitFor(async () => expect((await hub()).dropped_frames).toBe(before.dropped_frames + 1));
    expect(flooder.ws.readyState).toBe(WebSocket.OPEN);

    flooder.ws.send('x'.repeat(4 * MiB + 1));
    expect(await flooder.closed).toBe(1009);
    await vi.waitFor(async () => expect(await connected(id)).toBe(false));
    expect((await hub()).dropped_frames).toBe(before.dropped_frames + 1);
    await expectServing();
  });
});
