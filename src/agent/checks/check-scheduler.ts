// Runs the checks of the current set, each on its own interval. First runs are spread over a jittered
// part of the interval, so that a set of 500 checks received at once (or loaded at start) does not start
// 500 processes at once; at most `concurrency` checks run at a time, and a check never overlaps itself
// (its next run is planned when its run ends). Replacing the set keeps the schedule of every check whose
// id and definition are unchanged, stops removed and changed ones (killing a plugin they still run) and
// starts new ones.
import type { AgentCheck, CheckResult } from '../../modules/checks/check-protocol.js';

export interface CheckSchedulerOptions {
  run: (check: AgentCheck, signal: AbortSignal) => Promise<CheckResult>;
  /** Every finished run of a check still in the set. */
  onResult: (check: AgentCheck, result: CheckResult) => void;
  /** Most checks running at once; default 4. */
  concurrency?: number;
  /** A check's first run comes after random() × this share of its interval… default 0.25. */
  firstRunShare?: number;
  /** …but at most this long after it was scheduled (a daily check should not wait for hours); default 60 s. */
  firstRunMaxDelayMs?: number;
  /** Each later run moves by up to ± this share of the interval, so that checks do not drift into step; default 0.02. */
  jitterShare?: number;
  random?: () => number;
}

interface Entry {
  check: AgentCheck;
  /** The definition the schedule belongs to: the same id with another definition is a new check. */
  key: string;
  timer: NodeJS.Timeout | undefined;
  queued: boolean;
  /** Set while a run is under way; aborting it kills the run's plugin. */
  running: AbortController | null;
  stopped: boolean;
}

export function checkKey(check: AgentCheck): string {
  const { id, kind, params, interval_seconds, timeout_seconds } = check;
  return JSON.stringify([id, kind, params, interval_seconds, timeout_seconds]);
}

/** When a check first runs: a random point (`draw` in [0, 1)) of a share of its interval, capped. */
export function firstRunDelay(intervalMs: number, draw: number, share = 0.25, maxMs = 60_000): number {
  return Math.floor(draw * Math.min(intervalMs * share, maxMs));
}

export class CheckScheduler {
  private readonly entries = new Map<string, Entry>();
  private readonly queue: Entry[] = [];
  private active = 0;
  private stopped = false;
  private readonly idle = new Set<() => void>();

  constructor(private readonly options: CheckSchedulerOptions) {}

  /** The ids of the checks scheduled now. */
  get ids(): string[] {
    return [...this.entries.keys()];
  }

  /** How many runs are under way. */
  get running(): number {
    return this.active;
  }

  /** Makes `checks` the set: unchanged checks keep their schedule; removed and changed ones stop. */
  replace(checks: readonly AgentCheck[]): { kept: string[]; started: string[]; stopped: string[] } {
    if (this.stopped) return { kept: [], started: [], stopped: [] };
    const next = new Map(checks.map((c) => [c.id, c]));
    const kept: string[] = [];
    const started: string[] = [];
    const stopped: string[] = [];
    for (const [id, entry] of this.entries) {
      const check = next.get(id);
      if (check && checkKey(check) === entry.key) {
        entry.check = check; // a new name only: the schedule stays
        continue;
      }
      this.drop(entry);
      this.entries.delete(id);
      stopped.push(id);
    }
    for (const check of checks) {
      if (this.entries.has(check.id)) {
        kept.push(check.id);
        continue;
      }
      const entry: Entry = { check, key: checkKey(check), timer: undefined, queued: false, running: null, stopped: false };
      this.entries.set(check.id, entry);
      this.plan(entry, this.firstDelay(check));
      started.push(check.id);
    }
    return { kept, started, stopped };
  }

  /** Stops every check, kills running plugins, and resolves once their runs have ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const entry of this.entries.values()) this.drop(entry);
    this.entries.clear();
    if (this.active === 0) return;
    await new Promise<void>((resolve) => this.idle.add(resolve));
  }

  private firstDelay(check: AgentCheck): number {
    const { firstRunShare = 0.25, firstRunMaxDelayMs = 60_000, random = Math.random } = this.options;
    return firstRunDelay(check.interval_seconds * 1000, random(), firstRunShare, firstRunMaxDelayMs);
  }

  private nextDelay(check: AgentCheck, runStarted: number): number {
    const { jitterShare = 0.02, random = Math.random } = this.options;
    const interval = check.interval_seconds * 1000;
    const jitter = (random() * 2 - 1) * jitterShare * interval;
    return Math.max(0, runStarted + interval + jitter - Date.now());
  }

  private plan(entry: Entry, delayMs: number): void {
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      if (entry.stopped || entry.queued || entry.running) return;
      entry.queued = true;
      this.queue.push(entry);
      this.pump();
    }, delayMs);
  }

  private pump(): void {
    const limit = this.options.concurrency ?? 4;
    while (this.active < limit && this.queue.length > 0) {
      const entry = this.queue.shift()!;
      entry.queued = false;
      if (entry.stopped) continue;
      void this.runOnce(entry);
    }
  }

  private async runOnce(entry: Entry): Promise<void> {
    this.active += 1;
    const abort = new AbortController();
    entry.running = abort;
    const started = Date.now();
    try {
      const result = await this.options.run(entry.check, abort.signal);
      // A check removed or changed while it ran: its result belongs to no current check.
      if (!entry.stopped) this.options.onResult(entry.check, result);
    } catch {
      // run() resolves with UNKNOWN on every failure; nothing to report from here.
    } finally {
      entry.running = null;
      this.active -= 1;
      if (!entry.stopped) this.plan(entry, this.nextDelay(entry.check, started));
      this.pump();
      if (this.active === 0) for (const resolve of this.idle) resolve();
      if (this.active === 0) this.idle.clear();
    }
  }

  private drop(entry: Entry): void {
    entry.stopped = true;
    clearTimeout(entry.timer);
    entry.timer = undefined;
    entry.running?.abort();
    const at = this.queue.indexOf(entry);
    if (at !== -1) this.queue.splice(at, 1);
  }
}
