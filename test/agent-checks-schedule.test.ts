// The reference agent's check scheduler, reporter and persisted set (issue 61): a replaced set keeps,
// stops and starts the right checks; a removed check's running plugin is killed; no more than the limit
// run at once; results wait while the socket is down and go out when it is back; the set survives a
// restart. No assertion on speed: waits are generous and only order and content are checked.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CheckReporter } from '../src/agent/checks/check-reporter.js';
import { CheckScheduler, firstRunDelay } from '../src/agent/checks/check-scheduler.js';
import { checksFileFor, CheckStore } from '../src/agent/checks/check-store.js';
import { runCheck } from '../src/agent/checks/run-check.js';
import type { AgentCheck, CheckResult, CheckResultsFrame } from '../src/modules/checks/check-protocol.js';

let tmp: string;
const schedulers: CheckScheduler[] = [];
const reporters: CheckReporter[] = [];

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'agent-checks-schedule-'));
});
afterEach(async () => {
  await Promise.all(schedulers.splice(0).map((s) => s.stop()));
  for (const r of reporters.splice(0)) r.stop();
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

function check(name: string, params: Record<string, unknown> = { command: '/bin/true' }, timeout = 10): AgentCheck {
  return { id: randomUUID(), name, kind: 'script', params, interval_seconds: 60, timeout_seconds: timeout };
}

function result(c: AgentCheck, state: 0 | 1 | 2 | 3, output = `state ${state}`): CheckResult {
  return { check_id: c.id, state, output, perfdata: [], ran_at: new Date().toISOString(), duration_ms: 1 };
}

/** A scheduler whose runs are recorded and answer at once (the scheduling is under test, not the checks). */
function recordingScheduler(concurrency = 4) {
  const runs: string[] = [];
  const results: string[] = [];
  const scheduler = new CheckScheduler({
    run: async (c) => {
      runs.push(c.name);
      return result(c, 0);
    },
    onResult: (c) => results.push(c.name),
    concurrency,
    firstRunMaxDelayMs: 50,
  });
  schedulers.push(scheduler);
  return { scheduler, runs, results };
}

describe('scheduler', () => {
  it('a replaced set keeps unchanged checks on their schedule, stops removed and changed ones, starts new ones', async () => {
    const { scheduler, runs } = recordingScheduler();
    const a = check('a');
    const b = check('b');
    const c = check('c');
    expect(scheduler.replace([a, b, c])).toEqual({ kept: [], started: [a.id, b.id, c.id], stopped: [] });
    await vi.waitFor(() => expect([...runs].sort()).toEqual(['a', 'b', 'c']), { timeout: 10_000 });

    // a renamed only (same definition), b with another timeout, c removed, d new.
    const a2 = { ...a, name: 'a renamed' };
    const b2 = { ...b, name: 'b2', timeout_seconds: 20 };
    const d = check('d');
    expect(scheduler.replace([a2, b2, d])).toEqual({ kept: [a.id], started: [b.id, d.id], stopped: [b.id, c.id] });
    await vi.waitFor(() => expect(runs.slice(3).sort()).toEqual(['b2', 'd']), { timeout: 10_000 });
    expect(scheduler.ids.sort()).toEqual([a.id, b.id, d.id].sort());
    // a keeps its schedule (next run a minute after its first), c never runs again.
    expect(runs.filter((name) => name.startsWith('a'))).toEqual(['a']);
    expect(runs.filter((name) => name === 'c')).toEqual(['c']);
  });

  it('spreads first runs over a quarter of the interval, at most a minute', () => {
    expect([0, 0.5, 0.999].map((draw) => firstRunDelay(60_000, draw))).toEqual([0, 7500, 14985]);
    expect(firstRunDelay(86_400_000, 0.5)).toBe(30_000); // a daily check does not wait for hours
    const delays = Array.from({ length: 500 }, () => firstRunDelay(300_000, Math.random()));
    expect(new Set(delays).size).toBeGreaterThan(400); // 500 checks of one set do not all start together
  });

  it('runs at most `concurrency` checks at once', async () => {
    const release: Array<() => void> = [];
    let running = 0;
    let most = 0;
    const done: string[] = [];
    const scheduler = new CheckScheduler({
      run: async (c) => {
        running += 1;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => release.push(resolve));
        running -= 1;
        return result(c, 0);
      },
      onResult: (c) => done.push(c.name),
      concurrency: 2,
      firstRunMaxDelayMs: 20,
    });
    schedulers.push(scheduler);
    scheduler.replace(Array.from({ length: 6 }, (_, i) => check(`c${i}`)));
    while (done.length < 6) {
      await vi.waitFor(() => expect(release.length).toBeGreaterThan(0), { timeout: 10_000 });
      expect(scheduler.running).toBeLessThanOrEqual(2);
      release.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(most).toBe(2);
  });

  it.skipIf(process.platform === 'win32')('kills the running plugin of a removed check, and reports nothing for it', async () => {
    const pidFile = path.join(tmp, 'removed.pid');
    const results: CheckResult[] = [];
    const scheduler = new CheckScheduler({ run: runCheck, onResult: (_c, r) => results.push(r), firstRunMaxDelayMs: 20 });
    schedulers.push(scheduler);
    const sleeper = check('sleeper', { script: { shell: 'sh', body: `echo $$ > '${pidFile}'\nexec sleep 300\n` } }, 120);
    scheduler.replace([sleeper]);
    await vi.waitFor(() => expect(existsSync(pidFile)).toBe(true), { timeout: 10_000 });
    await vi.waitFor(async () => expect((await readFile(pidFile, 'utf8')).trim()).toMatch(/^\d+$/), { timeout: 10_000 });
    const pid = Number((await readFile(pidFile, 'utf8')).trim());
    expect(scheduler.replace([])).toEqual({ kept: [], started: [], stopped: [sleeper.id] });
    await vi.waitFor(() => expect(scheduler.running).toBe(0), { timeout: 10_000 });
    await vi.waitFor(
      async () => {
        const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
        expect(stat === null || / Z /.test(stat.slice(stat.lastIndexOf(')')))).toBe(true);
      },
      { timeout: 10_000 },
    );
    expect(results).toEqual([]);
  });
});

describe('reporter', () => {
  function reporter(open: { value: boolean }, reportIntervalMs = 500) {
    const frames: CheckResultsFrame[] = [];
    const r = new CheckReporter({
      send: (text) => {
        if (!open.value) return false;
        frames.push(JSON.parse(text) as CheckResultsFrame);
        return true;
      },
      changeDelayMs: 50,
      reportIntervalMs,
    });
    reporters.push(r);
    return { r, frames };
  }

  it('sends a state change soon, the rest with the next batch, all of a frame oldest first', async () => {
    const open = { value: true };
    const { r, frames } = reporter(open);
    const a = check('a');
    const b = check('b');
    r.setVersion('v1', [a.id, b.id]);
    r.add(result(a, 0, 'a first')); // a first result counts as a change
    await vi.waitFor(() => expect(frames).toHaveLength(1), { timeout: 10_000 });
    expect(frames[0]).toEqual({ type: 'check_results', version: 'v1', results: [expect.objectContaining({ check_id: a.id, output: 'a first' })] });
    r.add(result(a, 0, 'a same'));
    await vi.waitFor(() => expect(frames).toHaveLength(2), { timeout: 10_000 }); // the batch
    expect(frames[1]!.results.map((x) => x.output)).toEqual(['a same']);
    r.add(result(a, 0, 'a again'));
    r.add(result(a, 2, 'a critical'));
    await vi.waitFor(() => expect(frames).toHaveLength(3), { timeout: 10_000 });
    expect(frames[2]!.results.map((x) => x.output)).toEqual(['a again', 'a critical']);
    r.add(result(b, 1, 'b before removal'))
    r.setVersion('v2', [a.id]); // b removed: its waiting result is dropped, later ones ignored
    r.add(result(b, 1, 'b after removal'));
    r.flush();
    expect(frames.slice(3)).toEqual([]);
  });

  it("sends its batches at the agent's own point of the interval, not an interval after the first waiting result", () => {
    vi.useFakeTimers();
    try {
      const frames: CheckResultsFrame[] = [];
      // This agent's point: three quarters into each 1,000 ms.
      const r = new CheckReporter({ send: (text) => frames.push(JSON.parse(text) as CheckResultsFrame) > 0, changeDelayMs: 50, reportIntervalMs: 1000, random: () => 0.75 });
      reporters.push(r);
      const a = check('a');
      r.setVersion('v1', [a.id]);
      r.add(result(a, 0, 'first'));
      vi.advanceTimersByTime(100);
      expect(frames).toHaveLength(1); // a first result is a change
      r.add(result(a, 0, 'same'));
      vi.advanceTimersByTime(640);
      expect(frames).toHaveLength(1);
      vi.advanceTimersByTime(20); // 760 ms: past the agent's point
      expect(frames.map((f) => f.results[0]!.output)).toEqual(['first', 'same']);
      r.add(result(a, 0, 'later'));
      vi.advanceTimersByTime(980); // 1,740 ms: not yet
      expect(frames).toHaveLength(2);
      vi.advanceTimersByTime(20);
      expect(frames.map((f) => f.results[0]!.output)).toEqual(['first', 'same', 'later']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('the next result of a check whose definition changed counts as a change', async () => {
    const { r, frames } = reporter({ value: true }, 600_000); // no batch within the test: only changes go out
    const a = check('a');
    r.setVersion('v1', [a.id]);
    r.add(result(a, 0, 'first'));
    await vi.waitFor(() => expect(frames).toHaveLength(1), { timeout: 10_000 });
    r.add(result(a, 0, 'same state'));
    r.forget([a.id]);
    r.add(result(a, 0, 'changed definition'));
    await vi.waitFor(() => expect(frames).toHaveLength(2), { timeout: 10_000 });
    expect(frames[1]!.results.map((x) => x.output)).toEqual(['same state', 'changed definition']);
  });

  it('while the socket is down keeps the latest result of each check and the state changes, and sends them when it is back', async () => {
    const open = { value: false };
    const { r, frames } = reporter(open);
    const a = check('a');
    const b = check('b');
    r.setVersion('v1', [a.id, b.id]);
    r.add(result(a, 0, 'a1'));
    r.add(result(a, 0, 'a2'));
    r.add(result(a, 2, 'a3 critical'));
    r.add(result(a, 2, 'a4'));
    r.add(result(a, 2, 'a5'));
    r.add(result(b, 0, 'b1'));
    r.add(result(b, 0, 'b2'));
    r.flush();
    // Kept: the changes (a1 and b1, first of their checks; a3) and the latest of each check (a5, b2).
    expect(r.waiting).toBe(5);
    open.value = true;
    r.connected();
    expect(frames).toHaveLength(1);
    expect(frames[0]!.results.map((x) => x.output)).toEqual(['a1', 'a3 critical', 'a5', 'b1', 'b2']);
  });
});

describe('the persisted set', () => {
  it('is written atomically next to the state file and read back; a damaged file is ignored', async () => {
    const file = checksFileFor(path.join(tmp, 'agent-state.json'));
    expect(file).toBe(path.join(tmp, 'agent-state.checks.json'));
    const store = new CheckStore(file);
    expect(await store.load()).toBeNull();
    const set = { version: 'v7', checks: [check('a'), check('b', { command: '/bin/false', args: ['x'] })] };
    await Promise.all([store.save({ version: 'v6', checks: [] }), store.save(set)]);
    expect(await new CheckStore(file).load()).toEqual(set);
    await writeFile(file, '{"version":');
    const lines: string[] = [];
    expect(await new CheckStore(file).load((line) => lines.push(line))).toBeNull();
    expect(lines).toEqual([`checks: ignoring ${file}: not JSON`]);
  });
});
