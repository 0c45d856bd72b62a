// Issue 60: the RDP and web-interface launchers. Each opens a tunnel to the device's own port (the
// agent's RDP port; its web interface) that lets in only the opener's address and closes at the time
// limit; the RDP launcher serves a .rdp file naming the tunnel's port, to its opener only. On Linux every
// 127.x.y.z is loopback: a client "from another address" connects from 127.0.0.2.
import { readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../src/platform/clock.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, bearer, createKey, login, seedUser } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';
import { PROCESS_TEST_TIMEOUT_MS } from './helpers/spawn-server.js';
import { selfSignedCertificate } from './helpers/self-signed.js';
import { TunnelTargets } from './helpers/tunnels.js';

let s: LiveServer;
let admin: string;
let windows: LiveAgent;
let firewall: LiveAgent;
let echoPort: number;
const clock = new FakeClock(new Date());
const targets = new TunnelTargets();
let device: https.Server;
let devicePort: number;
let certDir: string;

beforeAll(async () => {
  s = await startLiveServer({ clock, env: { TUNNEL_BIND_ADDRESS: '127.0.0.1' } });
  admin = await adminToken(s);
  await seedUser(s, 'tech2', 'tech2-password-1', { role: 'write' });
  const key = (await createKey(s.app, bearer(admin), 'agent')).key;
  windows = await s.startAgent(key, { name: 'ws-rdp', platform: 'windows' });
  firewall = await s.startAgent(key, { name: 'fw-gui', platform: 'freebsd' });
  // The Windows machine's "RDP" is an echo on this host; the firewall's web interface an HTTPS server with its own certificate.
  echoPort = await targets.echo();
  expect((await call(admin, 'PUT', `/agents/${windows.id}/remote-access`, { rdp_port: echoPort })).statusCode).toBe(200);
  const { dir, cert, key: tlsKey } = await selfSignedCertificate('rmm-device-gui-');
  certDir = dir;
  device = https.createServer({ cert: await readFile(cert), key: await readFile(tlsKey) }, (_req, res) => res.end('OPNsense login'));
  await new Promise<void>((resolve) => device.listen(0, '127.0.0.1', resolve));
  devicePort = (device.address() as net.AddressInfo).port;
}, PROCESS_TEST_TIMEOUT_MS);
afterAll(async () => {
  await s?.close();
  await targets.close();
  device?.close();
  if (certDir) await rm(certDir, { recursive: true, force: true });
});

function call(token: string, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) {
  return s.app.inject({ method, url: `/api/v1${url}`, headers: bearer(token), remoteAddress: '127.0.0.1', ...(payload ? { payload } : {}) });
}

/** Sends a line from `from` through the proxy port: 'echoed' when it came back, else how the connection ended. */
function tryFrom(from: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress: from });
    socket.once('connect', () => socket.write('hello\n'));
    socket.once('data', () => {
      socket.destroy();
      resolve('echoed');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    socket.once('close', () => resolve('closed'));
  });
}

function fetchGui(from: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const req = https.get({ host: '127.0.0.1', port, path: '/', localAddress: from, rejectUnauthorized: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve(`${res.statusCode} ${body}`));
    });
    req.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
}

const tunnelIds = async (agentId: string) => (await call(admin, 'GET', `/agents/${agentId}/tunnels`)).json<Array<{ tunnel_id: string }>>().map((t) => t.tunnel_id);
const auditPaths = async (action: string) =>
  (await call(admin, 'GET', `/audit?action=${action}&limit=1000`)).json<Array<{ path: string }>>().map((e) => e.path);

describe('RDP launcher (issue 60)', () => {
  it('opens a tunnel to the RDP port for the opener\'s address only, with a .rdp file naming its port for the opener only', async () => {
    const res = await call(admin, 'POST', `/agents/${windows.id}/rdp`, {});
    expect(res.statusCode, res.body).toBe(201);
    const { tunnel, rdp_file_path: filePath, expires_at: expiresAt } = res.json();
    expect(tunnel).toMatchObject({ purpose: 'rdp', allow_from: ['127.0.0.1'], target_port: echoPort, expires_at: expiresAt });
    expect(new Date(expiresAt).getTime() - clock.now().getTime()).toBe(60 * 60_000);

    const file = await s.app.inject({ method: 'GET', url: filePath, headers: bearer(admin) });
    expect(file.statusCode, file.body).toBe(200);
    expect(file.headers['content-type']).toContain('application/x-rdp');
    expect(file.headers['content-disposition']).toBe('attachment; filename="ws-rdp.rdp"');
    expect(file.body).toContain(`full address:s:127.0.0.1:${tunnel.proxy_port}\r\n`);
    expectError(await s.app.inject({ method: 'GET', url: filePath, headers: bearer(await login(s.app, 'tech2', 'tech2-password-1')) }), 403, 'FORBIDDEN');

    expect(await tryFrom('127.0.0.2', tunnel.proxy_port)).not.toBe('echoed');
    expect(await tryFrom('127.0.0.1', tunnel.proxy_port)).toBe('echoed');
  });

  it('closes at its time limit, in use or not, and records why', async () => {
    const { tunnel } = (await call(admin, 'POST', `/agents/${windows.id}/rdp`, {})).json();
    await clock.advance(59 * 60_000);
    expect(await tunnelIds(windows.id)).toContain(tunnel.tunnel_id);
    await clock.advance(60_000);
    await vi.waitFor(async () => expect(await tunnelIds(windows.id)).not.toContain(tunnel.tunnel_id));
    expect(await tryFrom('127.0.0.1', tunnel.proxy_port)).not.toBe('echoed');
    await vi.waitFor(async () => expect(await auditPaths('device.rdp.end')).toContainEqual(expect.stringMatching(new RegExp(`session=${tunnel.tunnel_id};duration_s=3600;reason=time-limit`))));
  });

  it('is for Windows agents', async () => {
    expectError(await call(admin, 'POST', `/agents/${firewall.id}/rdp`, {}), 409, 'AGENT_UNSUPPORTED');
  });
});

describe('web-interface launcher (issue 60)', () => {
  it("reaches the device's own HTTPS interface from the opener's address only", async () => {
    expect((await call(admin, 'GET', `/agents/${firewall.id}/remote-access`)).json()).toMatchObject({ web_port: 443 });
    const res = await call(admin, 'POST', `/agents/${firewall.id}/web-interface`, { port: devicePort });
    expect(res.statusCode, res.body).toBe(201);
    const { tunnel, url } = res.json();
    expect(tunnel).toMatchObject({ purpose: 'web', allow_from: ['127.0.0.1'], target_port: devicePort });
    expect(url).toBe(`https://127.0.0.1:${tunnel.proxy_port}/`);
    expect(await fetchGui('127.0.0.1', tunnel.proxy_port)).toBe('200 OPNsense login');
    expect(await fetchGui('127.0.0.2', tunnel.proxy_port)).not.toContain('200');
  });

  it("needs a port where the platform has none (Windows), and takes the agent's own", async () => {
    expectError(await call(admin, 'POST', `/agents/${windows.id}/web-interface`, {}), 400, 'VALIDATION_ERROR');
    expect((await call(admin, 'PUT', `/agents/${windows.id}/remote-access`, { web_port: devicePort })).json()).toMatchObject({ web_port: devicePort });
    const res = await call(admin, 'POST', `/agents/${windows.id}/web-interface`, {});
    expect(res.statusCode, res.body).toBe(201);
    expect(await fetchGui('127.0.0.1', res.json().tunnel.proxy_port)).toBe('200 OPNsense login');
  });
});
