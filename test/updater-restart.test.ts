// The health check across restarts of the updater (issue 57, item 8: killed four times, a 40 s timeout
// had let a never-heartbeating binary run for 152 s, because every start counted from zero). The check's
// time runs from the start stored in the update record: a restarted updater resumes with what is left,
// and fails at once when the deadline passed while it was down. Real processes (service script, node
// agents, the real server); the updater runs in-process on a FakeClock and is stopped and made anew,
// which leaves the record on disk as a kill does (test/updater-resume.test.ts kills the real process).
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Updater, type CheckOutcome, type UpdaterOptions } from '../src/agent/updater/updater.js';
import { FakeClock } from '../src/platform/clock.js';
import { agentOf, agentScript, createDevice, driveClock, driveClockUntil, driveClockWithHeartbeats, requestUpdate, uploadFirmware, type Behaviour, type Device, type UpdaterServer, startUpdaterServer } from './helpers/updater-rig.js';

let server: UpdaterServer;
let versions = 0;
beforeAll(async () => (server = await startUpdaterServer()));
afterAll(() => server?.live.close());

interface Run {
  updater: Updater;
  outcome: Promise<CheckOutcome>;
  settled: () => boolean;
}

describe('a restarted updater during the health check', () => {
  let device: Device;
  let clock: FakeClock;
  let logs: string[];
  let options: UpdaterOptions;
  let current: Run | undefined;

  afterEach(async () => {
    await current?.updater.stop();
    current = undefined;
    await device.remove();
  });

  /** A device running v1, new firmware that behaves as `behaviour` requested, and the updater's options. */
  async function setUp(behaviour: Behaviour, rule: Partial<UpdaterOptions>): Promise<void> {
    const agentId = randomBytes(16).toString('hex');
    device = await createDevice(agentScript('v1'), [server.live.url, server.agentKey, agentId]);
    clock = new FakeClock();
    logs = [];
    options = { serverUrl: server.live.url, apiKey: server.agentKey, agentId, binaryPath: device.binary, service: device.service, clock, healthPollMs: 5_000, log: (l) => logs.push(l), ...rule };
    await device.service.start();
    await vi.waitFor(async () => expect((await agentOf(server.live, server.admin, agentId)).system?.variant).toBe('v1'), { timeout: 20_000, interval: 100 });
    await uploadFirmware(server.live, server.admin, `5.0.${++versions}`, agentScript(`v2-${behaviour.kind}`, behaviour));
    await requestUpdate(server.live, server.admin, agentId);
  }

  /** A fresh updater (as after a restart) running one check. */
  function start(): Run {
    let done = false;
    const updater = new Updater(options);
    const outcome = updater.checkOnce().finally(() => {
      done = true;
    });
    outcome.catch(() => undefined);
    current = { updater, outcome, settled: () => done };
    return current;
  }

  /** Stops the run as a kill would, leaving the update record; returns it. */
  async function stop(run: Run): Promise<Record<string, unknown>> {
    await run.updater.stop();
    await expect(run.outcome).rejects.toThrow(/updater stopped/);
    return JSON.parse(await readFile(`${device.binary}.update.json`, 'utf8')) as Record<string, unknown>;
  }

  const since = (t: number) => clock.now().getTime() - t;

  it('resumes a never-heartbeating binary\'s check with the time left, and rolls it back at the stored deadline', async () => {
    await setUp({ kind: 'never' }, { healthTimeoutMs: 40_000 });
    const t0 = clock.now().getTime();
    const first = start();
    await driveClockUntil(clock, () => first.settled() || since(t0) >= 30_000, 5_000);
    expect(first.settled(), logs.join('\n')).toBe(false);
    const record = await stop(first);

    // Each restart used to give it another 40 s; 30 s into the check, it has 10 s left.
    const t1 = clock.now().getTime();
    const second = start();
    await driveClockUntil(clock, () => second.settled() || since(t1) >= 30_000, 5_000);
    expect(second.settled(), logs.join('\n')).toBe(true);
    const outcome = await second.outcome;
    expect(outcome, logs.join('\n')).toMatchObject({ result: 'rolled-back', reason: expect.stringMatching(/no heartbeat from the new binary within 40 s/) });
    expect(since(t0)).toBe(40_000);
    expect(logs.join('\n')).toMatch(/its first heartbeat must reach the server within 40 s of its start, 10 s from now/);
    expect((await agentOf(server.live, server.admin, options.agentId)).updater).toMatchObject({ state: 'rolled_back' });
    expect(record).toMatchObject({ phase: 'checking', check_started_at: new Date(t0).toISOString() });
  });

  it('rolls back at once when the deadline passed while the updater was down', async () => {
    await setUp({ kind: 'never' }, { healthTimeoutMs: 40_000 });
    const t0 = clock.now().getTime();
    const first = start();
    await driveClockUntil(clock, () => first.settled() || since(t0) >= 20_000, 5_000);
    await stop(first);
    clock.set(new Date(t0 + 60_000)); // the updater was down for 40 s

    const second = start();
    const outcome = await driveClock(clock, second.outcome, 5_000);
    expect(outcome, logs.join('\n')).toMatchObject({ result: 'rolled-back', reason: expect.stringMatching(/no heartbeat from the new binary within 40 s/) });
    expect(since(t0)).toBe(60_000); // judged at its first look, without waiting
    expect(logs.join('\n')).toMatch(/the 40 s for its first heartbeat ran out while the updater was not running/);
  });

  it('resumes a good binary\'s health window with the time left, and clears the request then', async () => {
    await setUp({ kind: 'good' }, { healthTimeoutMs: 3_600_000, healthWindowMs: 60_000, heartbeatGapMs: 600_000 });
    const t0 = clock.now().getTime();
    const first = start();
    // Stop it 25 s into its window, whenever (in clock time) the first heartbeat came: a loaded machine can
    // make that late, and a window barely begun would make "the time left" indistinguishable from a new one.
    let heardAt: number | undefined;
    const heard = () => (heardAt ??= logs.some((l) => /first heartbeat from firmware/.test(l)) ? since(t0) : undefined);
    await driveClockUntil(clock, () => first.settled() || (heard() !== undefined && since(t0) >= (heardAt as number) + 25_000), 5_000);
    expect(first.settled(), logs.join('\n')).toBe(false);
    const record = await stop(first);
    const firstHeartbeat = record.first_heartbeat_ms as number;
    expect(firstHeartbeat).toBeGreaterThanOrEqual(0);
    const windowLeft = firstHeartbeat + 60_000 - since(t0);
    expect(windowLeft).toBeLessThanOrEqual(40_000);

    const t1 = clock.now().getTime();
    const second = start();
    // Each step waits for a real heartbeat of the agent (every 200 ms), so every poll sees a new one.
    const lastHeartbeat = async () => (await agentOf(server.live, server.admin, options.agentId)).last_heartbeat;
    expect(await driveClockWithHeartbeats(clock, second.outcome, 5_000, lastHeartbeat), logs.join('\n')).toMatchObject({ result: 'updated' });
    expect(logs.join('\n')).toMatch(/its health window of 60 s has \d+ s left/);
    // A full window again would be 60 s; it needed what was left (and a heartbeat seen since the restart).
    expect(since(t1)).toBeLessThan(60_000);
    expect(since(t1)).toBeGreaterThanOrEqual(windowLeft);
    expect((await agentOf(server.live, server.admin, options.agentId)).update_requested).toBe(false);
  });

  it('does not pass a binary that fell silent while the updater was down, though its window ran out meanwhile', async () => {
    await setUp({ kind: 'one-then-hang' }, { healthTimeoutMs: 3_600_000, healthWindowMs: 60_000, heartbeatGapMs: 30_000 });
    const first = start();
    await driveClockUntil(clock, () => first.settled() || logs.some((l) => /first heartbeat from firmware/.test(l)), 5_000);
    expect(first.settled(), logs.join('\n')).toBe(false);
    await stop(first);
    clock.set(new Date(clock.now().getTime() + 120_000)); // down for twice the window

    const second = start();
    const outcome = await driveClock(clock, second.outcome, 5_000);
    expect(outcome, logs.join('\n')).toMatchObject({ result: 'rolled-back', reason: expect.stringMatching(/no heartbeat from the new binary for \d+ s \(more than 30 s\)/) });
  });
});
