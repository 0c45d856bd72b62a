// The fleet's simulated checks (issue 61): results come from the simulated device (a stopped service is
// CRITICAL, its processes gone; disk, CPU and memory as the heartbeats report them), network checks fail
// in spells that come and go, the same ones for the same random source; and a fleet agent over a real
// WebSocket announces `checks`, answers checks_set and reports its set's results.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AgentCheck, CheckKind, CheckResult } from '../modules/checks/check-protocol.js';
import { Fleet } from './fleet.js';
import { SimulatedChecks } from './simulated-checks.js';
import { LazyDevice } from './simulated-device.js';
import { SimulatedSystem } from './simulated-system.js';
import { seeded } from '../../test/helpers/seeded-random.js';

const check = (kind: CheckKind, params: Record<string, unknown>, id: string = randomUUID()): AgentCheck => ({ id, name: kind, kind, params, interval_seconds: 60, timeout_seconds: 30 });

function simulated(platform: 'linux' | 'windows' | 'freebsd', random = seeded(1)) {
  const device = new LazyDevice(platform);
  const system = new SimulatedSystem(platform, 'host-1', random);
  return { device, system, checks: new SimulatedChecks({ platform, device, system, random }) };
}

describe('simulated checks', () => {
  it('read the simulated device: a stopped service is CRITICAL and its processes are gone', async () => {
    const { device, checks } = simulated('linux');
    const service = check('service', { name: 'pveproxy' });
    const procs = check('process', { pattern: 'pveproxy', match: 'name', min: 1 });
    expect(await checks.run(service)).toMatchObject({ state: 0, output: 'SERVICE OK - pveproxy is running' });
    expect(await checks.run(procs)).toMatchObject({ state: 0, perfdata: [{ label: 'procs', value: 2 }] });
    expect(await checks.run(check('service', { name: 'no-such' }))).toMatchObject({ state: 2 });

    device.get().serviceAction('pveproxy', 'stop');
    expect(await checks.run(service)).toMatchObject({ state: 2, output: 'SERVICE CRITICAL - pveproxy is stopped' });
    expect(await checks.run(procs)).toMatchObject({ state: 2, perfdata: [{ label: 'procs', value: 0 }] });
    device.get().serviceAction('pveproxy', 'start');
    expect(await checks.run(service)).toMatchObject({ state: 0 });
  });

  it('judge disk, CPU and memory as the heartbeats report them', async () => {
    const { system, checks } = simulated('windows');
    const beat = system.collect(null) as { disks: Array<{ used_percent: number }>; cpu: { usage_percent: number }; memory: { used_percent: number } };
    const disk = await checks.run(check('disk', { mount: 'c:', warn_percent: 0.1, crit_percent: 99.9 }));
    expect(disk).toMatchObject({ state: 1, perfdata: [{ label: 'c:', value: beat.disks[0]!.used_percent, uom: '%' }, { label: 'used', uom: 'B' }] });
    expect(await checks.run(check('cpu', { crit_percent: 0 }))).toMatchObject({ state: 2, perfdata: [{ label: 'cpu', value: beat.cpu.usage_percent }] });
    expect(await checks.run(check('memory', {}))).toMatchObject({ state: 0, perfdata: [{ label: 'memory', value: beat.memory.used_percent }, { label: 'used', uom: 'B' }] });
    expect(await checks.run(check('disk', { mount: 'D:' }))).toMatchObject({ state: 3 });
  });

  it('fail network checks in spells that come and go, the same for the same random source', async () => {
    const runs = async (seed: number) => {
      const { checks } = simulated('freebsd', seeded(seed));
      const https = check('http', { url: 'https://intranet.example.lan/health', warn_ms: 800, insecure: false }, '00000000-0000-4000-8000-000000000001');
      const results: CheckResult[] = [];
      for (let i = 0; i < 400; i++) results.push(await checks.run(https));
      return results;
    };
    const results = await runs(7);
    const states = results.map((r) => r.state);
    const spells = states.filter((s, i) => s !== 0 && states[i - 1] === 0).length;
    expect(spells).toBeGreaterThan(0);
    expect(states.filter((s) => s === 0).length).toBeGreaterThan(states.length * 0.9);
    // A spell lasts a few runs, then the check is healthy again.
    expect(states.join('')).not.toMatch(/[12]{7}/);
    expect(results[0]!.perfdata.map((p) => p.label)).toEqual(['time', 'size', 'cert_days']);
    expect(results.find((r) => r.state === 0)!.output).toMatch(/^HTTP OK - 200 OK - \d+ bytes in 0\.\d{3} s, certificate valid for \d+ days/);
    expect((await runs(7)).map((r) => r.state)).toEqual(states);
  });
});

describe('a fleet agent with checks', () => {
  let fleet: Fleet | undefined;
  let stateDir: string | undefined;
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await fleet?.stop();
    for (const close of closers.splice(0)) await close();
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
  });

  it('announces checks, answers checks_set and reports results from its simulated device', async () => {
    const frames: Array<Record<string, unknown>> = [];
    let socket: WebSocket | undefined;
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.url === '/api/v1/agent/register' ? { agent_id: 'b'.repeat(32) } : { ok: true })));
    });
    const wss = new WebSocketServer({ server, path: '/api/v1/agent/ws' });
    wss.on('connection', (ws) => {
      socket = ws;
      ws.on('message', (data, binary) => binary || frames.push(JSON.parse(String(data)) as Record<string, unknown>));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(async () => {
      for (const ws of wss.clients) ws.terminate();
      await new Promise((resolve) => wss.close(resolve));
      await new Promise((resolve) => server.close(resolve));
    });

    stateDir = await mkdtemp(path.join(os.tmpdir(), 'fleet-checks-'));
    fleet = new Fleet({ serverUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: 'k', agents: 1, intervalMs: 60_000, stateDir, startSpreadMs: 0, outageEveryMs: 0, mix: { linux: 1, freebsd: 0, windows: 0 }, random: seeded(3) });
    await fleet.start();
    await vi.waitFor(() => expect(frames.find((f) => f.type === 'hello')).toBeDefined());
    expect((frames.find((f) => f.type === 'hello') as { capabilities: string[] }).capabilities).toContain('checks');

    const set = { version: 'v1', checks: [check('service', { name: 'corosync' }), check('disk', { mount: '/', warn_percent: 85, crit_percent: 95 }), check('http', { url: 'https://intranet.example.lan/health', insecure: false })].map((c) => ({ ...c, interval_seconds: 10 })) };
    socket!.send(JSON.stringify({ type: 'command', id: 'c1', command: 'checks_set', params: set }));
    await vi.waitFor(() => expect(frames.find((f) => f.type === 'response' && f.id === 'c1')).toMatchObject({ success: true, data: { version: 'v1' } }));
    expect(fleet.stats.checkSetsAccepted).toBe(1);
    expect(fleet.checkSetsSince(0).agents).toBe(1);

    // First runs within a quarter of the 10 s interval, the changes (every first result) 2 s later.
    const reported = () => frames.filter((f) => f.type === 'check_results').flatMap((f) => f.results as CheckResult[]);
    await vi.waitFor(() => expect(new Set(reported().map((r) => r.check_id)).size).toBe(3), { timeout: 10_000, interval: 200 });
    const service = reported().find((r) => r.check_id === set.checks[0]!.id)!;
    expect(service).toMatchObject({ state: 0, output: 'SERVICE OK - corosync is running' });
    expect(frames.find((f) => f.type === 'check_results')).toMatchObject({ version: 'v1' });
  }, 20_000);
});
