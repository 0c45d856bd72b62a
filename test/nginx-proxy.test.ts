// The server behind a real nginx with the deployment guide's configuration (issue 34, acceptance 3):
// TLS with a certificate made here; the reference agent (a separate process trusting it) registers,
// heartbeats and answers a command over wss:// through nginx; a tunnel's WebSocket proxy carries bytes;
// the console page loads with its CSP; and the audit log records the client's real address (TRUST_PROXY),
// not the proxy's. The configuration is the file docs/deploy.md prints.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket, { createWebSocketStream } from 'ws';
import { buildConsole } from './helpers/browser.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';
import { NGINX, NGINX_SITE, startNginx, type RunningNginx } from './helpers/nginx.js';
import { exchange, openTunnel, TunnelTargets } from './helpers/tunnels.js';

const ROOT = path.resolve(import.meta.dirname, '..');

/** An HTTPS request through nginx, trusting the test's certificate; from `localAddress` when given. */
function request(nginx: RunningNginx, method: string, url: string, options: { body?: object; headers?: Record<string, string>; localAddress?: string } = {}) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const req = https.request(
      {
        host: '127.0.0.1',
        port: nginx.port,
        method,
        path: url,
        ca: nginx.ca,
        servername: 'localhost',
        localAddress: options.localAddress,
        headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...options.headers },
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe.skipIf(!existsSync(NGINX))('behind nginx with the guide\'s configuration', () => {
  let s: LiveServer;
  let nginx: RunningNginx;
  let webDir: string;
  let admin: Record<string, string>;
  let agentProcess: ChildProcess | undefined;
  let stateDir: string;
  const targets = new TunnelTargets();

  beforeAll(async () => {
    webDir = await buildConsole();
    s = await startLiveServer({ env: { TRUST_PROXY: '127.0.0.1', WEB_CONSOLE_DIR: webDir } });
    admin = bearer(await adminToken(s));
    nginx = await startNginx(Number(new URL(s.url).port));
    stateDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-nginx-agent-'));
  }, 120_000);
  afterAll(async () => {
    if (agentProcess && agentProcess.exitCode === null) {
      const exited = new Promise((resolve) => agentProcess!.once('exit', resolve));
      agentProcess.kill('SIGTERM');
      await exited;
    }
    await targets.close();
    await nginx?.stop();
    await s?.close();
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
  });

  it('is the configuration docs/deploy.md prints', async () => {
    const guide = await readFile(path.join(ROOT, 'docs/deploy.md'), 'utf8');
    expect(guide).toContain((await readFile(NGINX_SITE, 'utf8')).trim());
  });

  it('carries the reference agent over wss://: it registers, heartbeats and answers a command', async () => {
    const key = (await createKey(s.app, admin, 'agent')).key;
    agentProcess = spawn(process.execPath, ['--import', 'tsx', 'src/agent/main.ts', '--server', `https://localhost:${nginx.port}`, '--name', 'behind-nginx', '--interval', '2', '--state', path.join(stateDir, 'state.json')], {
      cwd: ROOT,
      env: { ...process.env, RMM_AGENT_KEY: key, NODE_EXTRA_CA_CERTS: nginx.caFile },
      stdio: 'ignore',
    });
    let id = '';
    await vi.waitFor(
      async () => {
        const [agent] = (await s.app.inject({ method: 'GET', url: '/api/v1/agents?q=behind-nginx', headers: admin })).json() as Array<{ id: string; status: string; last_heartbeat: string | null }>;
        expect(agent).toMatchObject({ status: 'online' });
        id = agent!.id;
        expect(((await s.app.inject({ method: 'GET', url: '/api/v1/hub/status', headers: admin })).json() as { agents: Array<{ agent_id: string }> }).agents.map((a) => a.agent_id)).toContain(id);
      },
      { timeout: 30_000, interval: 250 },
    );
    // The command goes out over the agent's socket, which came through nginx.
    const exec = await request(nginx, 'POST', `/api/v1/agents/${id}/exec`, { body: { command: 'echo through-nginx' }, headers: admin });
    expect(exec.status, exec.body).toBe(200);
    expect(JSON.parse(exec.body)).toMatchObject({ exit_code: 0, stdout: 'through-nginx\n' });

    // A tunnel's WebSocket proxy through nginx carries bytes both ways.
    const tunnel = await openTunnel(s, admin, id, await targets.echo());
    const ws = new WebSocket(`wss://localhost:${nginx.port}${tunnel.proxy_path}`, { ca: nginx.ca, headers: admin });
    await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
    const payload = Buffer.alloc(200_000, 7);
    expect((await exchange(createWebSocketStream(ws), payload)).equals(payload)).toBe(true);
  }, 60_000);

  it('serves the console with its Content-Security-Policy', async () => {
    const page = await request(nginx, 'GET', '/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<div id="root">');
    expect(String(page.headers['content-security-policy'])).toContain("default-src 'none'");
  });

  it("records the client's own address in the audit log, not the proxy's", async () => {
    const login = await request(nginx, 'POST', '/api/v1/auth/login', { body: { username: 'admin', password: 'wrong-password' }, localAddress: '127.0.0.2' });
    expect(login.status).toBe(401);
    const key = (await createKey(s.app, admin, 'write')).key;
    const made = await request(nginx, 'POST', '/api/v1/customers', { body: { number: '77001', name: 'Proxy GmbH' }, headers: apiKey(key), localAddress: '127.0.0.3' });
    expect(made.status, made.body).toBe(201);
    const entries = (await s.app.inject({ method: 'GET', url: '/api/v1/audit?limit=5', headers: admin })).json() as Array<{ action: string; ip: string }>;
    expect(entries.find((e) => e.action === 'customer.create')?.ip).toBe('127.0.0.3');
    expect(entries.find((e) => e.action === 'auth.login_failed')?.ip).toBe('127.0.0.2');
    // A client cannot name its own address: nginx replaces what it sent.
    const forged = await request(nginx, 'POST', '/api/v1/customers', { body: { number: '77002', name: 'Forged' }, headers: { ...apiKey(key), 'x-forwarded-for': '203.0.113.66' }, localAddress: '127.0.0.4' });
    expect(forged.status).toBe(201);
    const [newest] = (await s.app.inject({ method: 'GET', url: '/api/v1/audit?limit=1', headers: admin })).json() as Array<{ ip: string }>;
    expect(newest!.ip).toBe('127.0.0.4');
  });
});
