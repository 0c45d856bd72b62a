// The update record on disk and the rollback that does not give up (issue 30, items 2 and 3), with real
// processes: a service script runs node-script agents; item 2 kills the real updater process
// (`npm run updater`) with SIGKILL during the health check and starts it again; item 3 lets the
// service refuse to start the previous binary for a while, on a FakeClock for the back-off.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { access, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Updater } from '../src/agent/updater/updater.js';
import { FakeClock } from '../src/platform/clock.js';
import type { LiveServer } from './helpers/live-agent.js';
import { childEnv, PROCESS_TEST_TIMEOUT_MS, ROOT } from './helpers/spawn-server.js';
import {
  agentOf,
  agentScript,
  createDevice,
  driveClock,
  driveClockUntil,
  requestUpdate,
  sha256,
  startCuttableProxy,
  uploadFirmware,
  type Device, startUpdaterServer
} from './helpers/updater-rig.js';

let live: LiveServer;
let dataDir: string;
let admin: Record<string, string>;
let agentKey: string;
let versions = 0;

beforeAll(async () => {
  ({ live, admin, agentKey } = await startUpdaterServer());
  dataDir = live.config.dataDir;
});
afterAll(() => live?.close());

const v1 = agentScript('v1');
let device: Device | undefined;
afterEach(async () => {
  await device?.remove();
  device = undefined;
});

async function deviceRunningV1(): Promise<{ device: Device; agentId: string }> {
  const agentId = randomBytes(16).toString('hex');
  device = await createDevice(v1, [live.url, agentKey, agentId]);
  await device.service.start();
  await vi.waitFor(async () => expect((await agentOf(live, admin, agentId)).system?.variant).toBe('v1'), { timeout: 20_000, interval: 100 });
  return { device, agentId };
}

/** v1 is installed, runs and heartbeats again after `after`. */
async function expectV1Back(d: Device, agentId: string, after: string): Promise<void> {
  expect(await readFile(d.binary, 'utf8')).toBe(v1);
  await vi.waitFor(
    async () => {
      const agent = await agentOf(live, admin, agentId);
      expect(agent.system).toMatchObject({ variant: 'v1', agent_sha256: sha256(v1) });
      expect(Date.parse(agent.last_heartbeat!)).toBeGreaterThan(Date.parse(after));
    },
    { timeout: 20_000, interval: 100 },
  );
}

describe('a killed updater (item 2)', () => {
  const running = new Set<ChildProcess>();
  afterEach(() => {
    for (const child of running) child.kill('SIGKILL');
    running.clear();
  });

  function startUpdater(d: Device, agentId: string) {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/agent/updater/main.ts', '--server', live.url, '--agent-id', agentId, '--binary', d.binary, '--service-cmd', d.serviceCommand,
        '--interval', '1', '--health-timeout', '5'],
      { cwd: ROOT, env: childEnv({ RMM_AGENT_KEY: agentKey }), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    running.add(child);
    const lines: string[] = [];
    readline.createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
    readline.createInterface({ input: child.stderr }).on('line', (line) => lines.push(line));
    return { child, lines, exited: once(child, 'exit') };
  }

  it(
    'resumes the health check from its record after SIGKILL and rolls back a binary that never heartbeats',
    async () => {
      const { device: d, agentId } = await deviceRunningV1();
      const silent = agentScript('silent', { kind: 'never' });
      const firmware = await uploadFirmware(live, admin, `4.0.${++versions}`, silent);
      await requestUpdate(live, admin, agentId);

      const first = startUpdater(d, agentId);
      // Killed while the new binary runs and has not yet been judged.
      await vi.waitFor(
        async () => {
          expect(first.lines.join('\n')).toMatch(/installing firmware/);
          expect(await readFile(d.binary, 'utf8')).toBe(silent);
          expect(await d.runningPid()).not.toBeNull();
        },
        { timeout: 60_000, interval: 50 },
      );
      first.child.kill('SIGKILL');
      await first.exited;
      const recorded = await readFile(`${d.binary}.update.json`, 'utf8').catch(() => 'none');
      const killedAt = new Date().toISOString();

      const second = startUpdater(d, agentId);
      await vi.waitFor(() => expect(second.lines.join('\n')).toMatch(/previous binary restored and started|already installed/), { timeout: 60_000, interval: 100 });
      const log = second.lines.join('\n');
      expect(log).not.toMatch(/already installed/);
      expect(JSON.parse(recorded)).toMatchObject({ phase: 'checking', sha256: firmware.sha256, previous: `${d.binary}.previous` });
      expect(log).toMatch(/resuming the update to firmware 4\.0\.\d+ \(phase checking/);
      expect(log).toMatch(/no heartbeat from the new binary within 5 s/);
      expect(log).not.toMatch(/already installed/);
      await expectV1Back(d, agentId, killedAt);
      const agent = await agentOf(live, admin, agentId);
      expect(agent.update_requested).toBe(true);
      expect(agent.updater).toMatchObject({ state: 'rolled_back', version: firmware.version });
      await expect(access(`${d.binary}.update.json`)).rejects.toThrow(/ENOENT/);
      second.child.kill('SIGTERM');
      expect((await second.exited)[0]).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

describe('a rollback whose start fails (item 3)', () => {
  it('retries the start with back-off, reports each failure, and a restarted updater goes on retrying', async () => {
    const { device: d, agentId } = await deviceRunningV1();
    const clock = new FakeClock();
    const logs: string[] = [];
    const make = () =>
      new Updater({
        serverUrl: live.url,
        apiKey: agentKey,
        agentId,
        binaryPath: d.binary,
        service: d.service,
        clock,
        healthPollMs: 1_000,
        log: (line) => logs.push(line),
      });
    const firmware = await uploadFirmware(live, admin, `4.0.${++versions}`, agentScript('v2'));
    await requestUpdate(live, admin, agentId);
    // From now on the service manager refuses to start anything: the new binary, then the old one.
    await writeFile(d.failMarker, 'unit is masked');
    const before = new Date().toISOString();

    let updater = make();
    let settled = false;
    const outcome = updater.checkOnce().finally(() => {
      settled = true;
    });
    outcome.catch(() => undefined);
    const failures = () => logs.filter((l) => /ROLLBACK FAILED/.test(l));
    // 5 s, 10 s, 20 s between the tries: three failed starts within 35 s.
    await driveClockUntil(clock, () => settled || failures().length >= 3, 5_000);
    expect(settled, logs.join('\n')).toBe(false);
    expect(failures()[0]).toMatch(/start attempt 1 failed: .*exited with 1: start refused: unit is masked; the agent is down; trying again in 5 s/);
    expect(failures()[2]).toMatch(/start attempt 3 failed: .*trying again in 20 s/);
    expect(await d.runningPid()).toBeNull();
    expect(await readFile(d.binary, 'utf8')).toBe(v1); // put back before the first try
    expect((await agentOf(live, admin, agentId)).updater).toMatchObject({ state: 'rollback_failed', version: firmware.version, message: expect.stringMatching(/start attempt 3 failed/) });
    expect((await agentOf(live, admin, agentId)).update_requested).toBe(true);

    // The updater is restarted meanwhile: its record says "rolling back", and the new one keeps at it.
    await updater.stop();
    await expect(outcome).rejects.toThrow(/updater stopped/);
    expect(JSON.parse(await readFile(`${d.binary}.update.json`, 'utf8'))).toMatchObject({ phase: 'rolling-back', version: firmware.version });
    logs.length = 0;
    updater = make();
    let resumedDone = false;
    const resumed = updater.checkOnce().finally(() => {
      resumedDone = true;
    });
    await driveClockUntil(clock, () => failures().length >= 1, 5_000);
    expect(logs.join('\n')).toMatch(/resuming the update to firmware .* \(phase rolling-back/);

    await rm(d.failMarker); // the service manager lets it start again
    await driveClockUntil(clock, () => resumedDone, 5_000);
    expect(await resumed, logs.join('\n')).toMatchObject({ result: 'rolled-back', version: firmware.version });
    expect(logs.join('\n')).toMatch(/the agent runs again \(start attempt \d\)/);
    await expectV1Back(d, agentId, before);
    expect((await agentOf(live, admin, agentId)).updater).toMatchObject({ state: 'rolled_back', version: firmware.version });
    await expect(access(`${d.binary}.update.json`)).rejects.toThrow(/ENOENT/);
    await updater.stop();
  });
});

describe('firmware that failed here (item 9: fetched again in full every poll)', () => {
  it('is remembered on disk with a doubling wait, across restarts, and forgotten when the server offers other firmware', async () => {
    const proxy = await startCuttableProxy(live.url);
    try {
      const agentId = randomBytes(16).toString('hex');
      device = await createDevice(v1, [live.url, agentKey, agentId]);
      await device.service.start();
      await vi.waitFor(async () => expect((await agentOf(live, admin, agentId)).system?.variant).toBe('v1'), { timeout: 20_000, interval: 100 });
      const clock = new FakeClock();
      const logs: string[] = [];
      const make = () =>
        new Updater({ serverUrl: proxy.url, apiKey: agentKey, agentId, binaryPath: device!.binary, service: device!.service, clock, healthWindowMs: 1_000, log: (l) => logs.push(l) });
      const downloads = () => proxy.requests.filter((r) => r.startsWith('GET /api/v1/firmware/download')).length;
      const v2 = agentScript('v2');
      const bad = await uploadFirmware(live, admin, `4.0.${++versions}`, v2);
      // The stored bytes go bad after the upload recorded their hash.
      await writeFile(path.join(dataDir, 'blobs', bad.sha256), `${v2.slice(0, -2)}X\n`);
      await requestUpdate(live, admin, agentId);

      let updater = make();
      expect(await updater.checkOnce()).toMatchObject({ result: 'refused', reason: expect.stringMatching(/SHA-256 mismatch/) });
      expect(await updater.checkOnce()).toEqual({ result: 'known-bad', version: bad.version });
      await updater.stop();
      updater = make(); // a restarted updater reads what was refused from disk
      expect(await updater.checkOnce()).toEqual({ result: 'known-bad', version: bad.version });
      expect(downloads()).toBe(1);
      const agent = await agentOf(live, admin, agentId);
      expect(agent.updater).toMatchObject({ state: 'refused', version: bad.version, message: expect.stringMatching(/SHA-256 mismatch/) });
      expect(agent.update_requested).toBe(true);

      // After an hour it is tried again; failing again, it waits two hours.
      clock.set(new Date(clock.now().getTime() + 61 * 60_000));
      expect(await updater.checkOnce()).toMatchObject({ result: 'refused' });
      expect(downloads()).toBe(2);
      const memory = JSON.parse(await readFile(`${device.binary}.update-memory.json`, 'utf8')) as { refusal: { failures: number; retry_at: string } };
      expect(memory.refusal.failures).toBe(2);
      expect(Date.parse(memory.refusal.retry_at) - clock.now().getTime()).toBe(2 * 3_600_000);
      clock.set(new Date(clock.now().getTime() + 60 * 60_000));
      expect(await updater.checkOnce()).toEqual({ result: 'known-bad', version: bad.version });
      expect(downloads()).toBe(2);

      // A good build is offered: the refusal is forgotten and it is installed at once.
      const good = await uploadFirmware(live, admin, `4.0.${++versions}`, agentScript('v3'));
      await requestUpdate(live, admin, agentId);
      expect(await driveClock(clock, updater.checkOnce(), 1_000), logs.join('\n')).toEqual({ result: 'updated', version: good.version });
      expect(logs.join('\n')).toMatch(/the earlier refusal of firmware 4\.0\.\d+ is forgotten/);
      await expect(access(`${device.binary}.update-memory.json`)).rejects.toThrow(/ENOENT/);
      await updater.stop();
    } finally {
      await proxy.close();
    }
  });
});
