// Issue 60: the remote desktop. A desktop is a tunnel to the device's VNC server (the agent's
// remote-access target) carried only over the proxy WebSocket of the sign-in session that opened it;
// read users view only (when the setting allows) and their input is dropped by the server; the desktop
// closes with its WebSocket, when none connects in time, and after the idle limit without input; every
// desktop is audited with its start and end. The VNC server is a recording stand-in (helpers/vnc-target.ts).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { FakeClock } from '../src/platform/clock.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createCustomer, createKey, login, seedUser } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';
import { PROCESS_TEST_TIMEOUT_MS } from './helpers/spawn-server.js';
import { CLIENT_HANDSHAKE, rfb, SERVER_HANDSHAKE_BYTES, VncTarget } from './helpers/vnc-target.js';

let s: LiveServer;
let admin: string;
let agent: LiveAgent;
const clock = new FakeClock(new Date());
const vnc = new VncTarget();
const PASSWORD = 'desktop-password-1';

beforeAll(async () => {
  s = await startLiveServer({ clock });
  admin = await adminToken(s);
  const [mine, other] = [await createCustomer(s.app, admin, '60001'), await createCustomer(s.app, admin, '60002')];
  await seedUser(s, 'tech', PASSWORD, { role: 'write' });
  await seedUser(s, 'tech2', PASSWORD, { role: 'write' });
  await seedUser(s, 'viewer', PASSWORD, { role: 'read' });
  await seedUser(s, 'elsewhere', PASSWORD, { role: 'write', customer_ids: [other.id] });
  agent = await s.startAgent((await createKey(s.app, bearer(admin), 'agent')).key, { name: 'ws-desktop', platform: 'windows' });
  await call(admin, 'PUT', `/agents/${agent.id}/customer`, { customer_id: mine.id });
  const port = await vnc.listen();
  expect((await call(admin, 'PUT', `/agents/${agent.id}/remote-access`, { vnc_port: port })).statusCode).toBe(200);
}, PROCESS_TEST_TIMEOUT_MS);
afterAll(async () => {
  await s?.close();
  await vnc.close();
});

function call(token: string, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) {
  return s.app.inject({ method, url: `/api/v1${url}`, headers: bearer(token), ...(payload ? { payload } : {}) });
}

async function openDesktop(token: string, body: object = {}): Promise<{ tunnel_id: string; websocket_path: string; view_only: boolean; idle_minutes: number }> {
  const res = await call(token, 'POST', `/agents/${agent.id}/desktop`, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** Bytes each desktop WebSocket received, counted from before 'open': the server's greeting can arrive with
 * the upgrade's response, and ws emits it before anything awaiting 'open' resumes. */
const receivedBytes = new WeakMap<WebSocket, number>();

/** Opens the desktop's WebSocket with `query` credentials; the HTTP status when refused. */
function connect(path: string, query: string): Promise<WebSocket | number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${s.url.replace('http', 'ws')}${path}?${query}`);
    ws.binaryType = 'nodebuffer';
    ws.on('message', (data: Buffer) => receivedBytes.set(ws, (receivedBytes.get(ws) ?? 0) + data.length));
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('error', () => resolve(0));
  });
}

/** Runs the client's handshake once the server's has arrived, then sends `messages`. */
async function drive(ws: WebSocket, messages: Buffer[]): Promise<void> {
  ws.send(CLIENT_HANDSHAKE.subarray(0, 12));
  // The rest of the client's handshake after the server's security types: sent at once, the server reads it in order.
  ws.send(CLIENT_HANDSHAKE.subarray(12));
  await vi.waitFor(() => expect(receivedBytes.get(ws) ?? 0).toBeGreaterThanOrEqual(SERVER_HANDSHAKE_BYTES), { timeout: 10_000 });
  for (const m of messages) ws.send(m);
}

const tunnels = async () => (await call(admin, 'GET', `/agents/${agent.id}/tunnels`)).json<Array<{ tunnel_id: string; purpose: string; allow_from: string[] }>>();
const auditPaths = async (action: string) =>
  (await call(admin, 'GET', `/audit?action=${action}&limit=1000`)).json<Array<{ path: string }>>().map((e) => e.path);

describe('remote desktop (issue 60)', () => {
  it("carries RFB to the device's VNC server over the WebSocket of the sign-in session that opened it, and no other", async () => {
    const tech = await login(s.app, 'tech', PASSWORD);
    const desktop = await openDesktop(tech);
    expect(desktop).toMatchObject({ websocket_path: `/api/v1/proxy/${desktop.tunnel_id}`, view_only: false, idle_minutes: 15 });
    expect(await tunnels()).toContainEqual(expect.objectContaining({ tunnel_id: desktop.tunnel_id, purpose: 'desktop', allow_from: [] }));

    const writeKey = (await createKey(s.app, bearer(admin), 'write')).key;
    const refusals = {
      'the same user, another sign-in': await connect(desktop.websocket_path, `token=${await login(s.app, 'tech', PASSWORD)}`),
      'another user': await connect(desktop.websocket_path, `token=${await login(s.app, 'tech2', PASSWORD)}`),
      'an admin': await connect(desktop.websocket_path, `token=${admin}`),
      'a write key': await connect(desktop.websocket_path, `api_key=${writeKey}`),
      "a user of another customer": await connect(desktop.websocket_path, `token=${await login(s.app, 'elsewhere', PASSWORD)}`),
    };
    expect(refusals).toEqual({ 'the same user, another sign-in': 403, 'another user': 403, 'an admin': 403, 'a write key': 403, 'a user of another customer': 404 });

    const before = vnc.connections;
    const ws = (await connect(desktop.websocket_path, `token=${tech}`)) as WebSocket;
    const input = [rfb.setEncodings(), rfb.pointer(1, 10, 20), rfb.key(true, 0x61), rfb.key(false, 0x61), rfb.updateRequest()];
    await drive(ws, input);
    await vi.waitFor(() => expect(Buffer.concat(vnc.received[before] ?? [])).toEqual(Buffer.concat(input)));

    // The tab closes: the desktop's tunnel goes with its socket, and the audit log has both ends.
    ws.close();
    await vi.waitFor(async () => expect((await tunnels()).map((t) => t.tunnel_id)).not.toContain(desktop.tunnel_id), { timeout: 5_000 });
    await vi.waitFor(async () => expect(await auditPaths('device.desktop.end')).toContainEqual(expect.stringMatching(new RegExp(`session=${desktop.tunnel_id};duration_s=\\d+;reason=session-ended;bytes_in=[1-9]`))));
    expect(await auditPaths('device.desktop.start')).toContainEqual(expect.stringContaining(`session=${desktop.tunnel_id}`));
  });

  it('is for signed-in users: API keys never open one, read users only view-only when the setting allows, and their input never reaches the device', async () => {
    const writeKey = (await createKey(s.app, bearer(admin), 'write')).key;
    const byKey = await s.app.inject({ method: 'POST', url: `/api/v1/agents/${agent.id}/desktop`, headers: apiKey(writeKey), payload: {} });
    expectError(byKey, 403, 'FORBIDDEN');
    const viewer = await login(s.app, 'viewer', PASSWORD);
    expectError(await call(viewer, 'POST', `/agents/${agent.id}/desktop`, {}), 403, 'FORBIDDEN');
    expectError(await call(await login(s.app, 'elsewhere', PASSWORD), 'POST', `/agents/${agent.id}/desktop`, {}), 404, 'NOT_FOUND');

    expect((await call(admin, 'PUT', '/settings', { remote_desktop_read_view_only: true })).statusCode).toBe(200);
    try {
      const desktop = await openDesktop(viewer, { view_only: false });
      expect(desktop.view_only).toBe(true);
      const before = vnc.connections;
      const ws = (await connect(desktop.websocket_path, `token=${viewer}`)) as WebSocket;
      await drive(ws, [rfb.setEncodings(), rfb.key(true, 0xffe3), rfb.pointer(1, 5, 5), rfb.updateRequest(), rfb.key(false, 0xffe3)]);
      // Only the requests for the screen arrive; a later request shows nothing was left in between.
      await vi.waitFor(() => expect(Buffer.concat(vnc.received[before] ?? [])).toEqual(Buffer.concat([rfb.setEncodings(), rfb.updateRequest()])));
      ws.close();
    } finally {
      await call(admin, 'PUT', '/settings', { remote_desktop_read_view_only: false });
    }
  });

  it('closes after the idle limit without keyboard or mouse, however much the screen changes, and when nobody connects within a minute', async () => {
    const tech = await login(s.app, 'tech', PASSWORD);
    const unused = await openDesktop(tech);
    await clock.advance(61_000);
    await vi.waitFor(async () => expect((await tunnels()).map((t) => t.tunnel_id)).not.toContain(unused.tunnel_id));

    const desktop = await openDesktop(tech);
    const ws = (await connect(desktop.websocket_path, `token=${tech}`)) as WebSocket;
    await drive(ws, [rfb.setEncodings(), rfb.updateRequest()]);
    await clock.advance(10 * 60_000);
    ws.send(rfb.pointer(0, 1, 1)); // input: the idle limit starts again
    await vi.waitFor(() => expect(Buffer.concat(vnc.received.at(-1) ?? []).length).toBeGreaterThanOrEqual(24));
    await clock.advance(10 * 60_000);
    ws.send(rfb.updateRequest()); // the screen only: not input
    await clock.advance(4 * 60_000);
    expect((await tunnels()).map((t) => t.tunnel_id)).toContain(desktop.tunnel_id);
    await clock.advance(61_000);
    await vi.waitFor(async () => expect((await tunnels()).map((t) => t.tunnel_id)).not.toContain(desktop.tunnel_id));
    await vi.waitFor(async () => expect(await auditPaths('device.desktop.end')).toContainEqual(expect.stringMatching(new RegExp(`session=${desktop.tunnel_id};.*reason=idle`))));
    expect(ws.readyState === WebSocket.CLOSED || ws.readyState === WebSocket.CLOSING).toBe(true);
  });
});
