// GET /metrics (issue 34, acceptance 1): after real traffic from a reference agent over its socket
// (heartbeats, a command, a tunnel carrying bytes) and a refused sign-in, the scrape shows the values
// moved; the exposition passes `promtool check metrics`; no label carries an agent id; and the endpoint
// is never public: a token when METRICS_TOKEN is set, else this machine only, never through a proxy.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from './helpers/assertions.js';
import { adminToken, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';
import { connect, exchange, openTunnel, TunnelTargets } from './helpers/tunnels.js';

const TOKEN = 'scrape-token-0123456789';
const PROMTOOL = '/usr/bin/promtool';

let s: LiveServer;
let admin: Record<string, string>;
let agent: LiveAgent;
const targets = new TunnelTargets();

/** The value of one sample, e.g. value(text, 'rmm_agents', { status: 'online' }); undefined when absent. */
function value(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-z_:][a-z0-9_:]*)(?:\{(.*)\})? (\S+)$/i.exec(line);
    if (!match || match[1] !== name) continue;
    const have = (match[2] ?? '').split(',').filter(Boolean);
    if (wanted.every((w) => have.includes(w)) && have.length === wanted.length) return Number(match[3]);
  }
  return undefined;
}

const scrape = async (headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) => {
  const res = await fetch(`${s.url}/metrics`, { headers });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
};

beforeAll(async () => {
  s = await startLiveServer({ env: { METRICS_TOKEN: TOKEN } });
  admin = bearer(await adminToken(s));
  agent = await s.startAgent((await createKey(s.app, admin, 'agent')).key, { name: 'metrics-host' });
});
afterAll(async () => {
  await targets.close();
  await s.close();
});

describe('GET /metrics', () => {
  it('moves with real traffic: heartbeats, a command, a tunnel, a refused sign-in', async () => {
    const before = (await scrape()).text;
    for (let i = 0; i < 3; i++) await agent.agent.sendHeartbeat();
    const exec = await s.app.inject({ method: 'POST', url: `/api/v1/agents/${agent.id}/exec`, headers: admin, payload: { command: 'echo metrics' } });
    expect(exec.statusCode, exec.body).toBe(200);
    const tunnel = await openTunnel(s, admin, agent.id, await targets.echo());
    const client = await connect(tunnel.proxy_port);
    expect((await exchange(client, Buffer.alloc(5000, 1))).length).toBe(5000);
    const login = await s.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'admin', password: 'wrong-password' } });
    expect(login.statusCode).toBe(401);

    const { status, type, text } = await scrape();
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    const moved = (name: string, labels?: Record<string, string>) => (value(text, name, labels) ?? 0) - (value(before, name, labels) ?? 0);
    expect(moved('rmm_heartbeats_total', { outcome: 'stored' })).toBe(3);
    expect(moved('rmm_heartbeat_duration_seconds_count')).toBe(3);
    expect(moved('rmm_agent_commands_total', { command: 'exec', outcome: 'ok' })).toBe(1);
    expect(moved('rmm_agent_command_duration_seconds_count', { command: 'exec' })).toBe(1);
    expect(moved('rmm_login_failures_total', { reason: 'password' })).toBe(1);
    expect(value(text, 'rmm_agents_connected', { platform: 'linux' })).toBe(1);
    expect(value(text, 'rmm_agents', { status: 'online' })).toBe(1);
    expect(value(text, 'rmm_tunnels_open')).toBe(1);
    expect(value(text, 'rmm_tunnel_relayed_bytes_total', { direction: 'in' })).toBeGreaterThanOrEqual(5000);
    expect(value(text, 'rmm_tunnel_relayed_bytes_total', { direction: 'out' })).toBeGreaterThanOrEqual(5000);
    expect(value(text, 'rmm_process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(text).toContain('rmm_nodejs_eventloop_lag_seconds');
    // Low cardinality: never an agent id (nor a user) in a label.
    expect(text).not.toContain(agent.id);
    expect(text).not.toContain('admin');
  });

  it.skipIf(!existsSync(PROMTOOL))('passes promtool check metrics (Debian package prometheus; .ci/run installs it)', async () => {
    const { text } = await scrape();
    const problems = await new Promise<string>((resolve, reject) => {
      const child = execFile(PROMTOOL, ['check', 'metrics'], (err, stdout, stderr) => (err && !stderr && !stdout ? reject(err) : resolve(`${stdout}${stderr}`)));
      child.stdin!.end(text);
    });
    expect(problems.trim()).toBe('');
  });

  it('takes only its bearer token when METRICS_TOKEN is set', async () => {
    expect((await scrape({})).status).toBe(401);
    expect((await scrape({ authorization: 'Bearer wrong-token-0123456789' })).status).toBe(401);
    const res = await s.app.inject({ method: 'GET', url: '/metrics', headers: admin });
    expectError(res, 401, 'UNAUTHORIZED');
  });
});

describe('GET /metrics without METRICS_TOKEN', () => {
  let local: LiveServer;
  beforeAll(async () => {
    local = await startLiveServer({});
  });
  afterAll(() => local.close());

  it('answers this machine, and refuses what came through a proxy', async () => {
    expect((await fetch(`${local.url}/metrics`)).status).toBe(200);
    for (const header of [{ 'x-forwarded-for': '203.0.113.9' }, { forwarded: 'for=203.0.113.9' }] as Array<Record<string, string>>) {
      const res = await fetch(`${local.url}/metrics`, { headers: header });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { code: string }).code).toBe('FORBIDDEN');
    }
  });
});
