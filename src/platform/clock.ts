// Time as a dependency: everything that reads the time or waits (monitor, hub timeouts, scheduler)
// takes a Clock, so tests can move time forward instead of sleeping.
import { setTimeout as delay } from 'node:timers/promises';

export interface Clock {
  now(): Date;
  /** Resolves after `ms`; rejects with the signal's reason when aborted first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `fire` after `ms` unless the returned function cancels it first. For timeouts that are
   * usually cancelled (a command's answer): cancelling a `sleep` through its signal builds an AbortError
   * with a stack each time, which cost every command about 0.2 ms of CPU.
   */
  timer(ms: number, fire: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => new Date(),
  sleep: async (ms, signal) => {
    await delay(ms, undefined, { signal });
  },
  timer: (ms, fire) => {
    const handle = setTimeout(fire, ms);
    return () => clearTimeout(handle);
  },
};

interface Sleeper {
  wakeAt: number;
  resolve(): void;
}

/** A clock that only moves when told to; `advance` wakes every sleeper that has become due, in order. */
export class FakeClock implements Clock {
  #now: number;
  #sleepers: Sleeper[] = [];

  constructor(start: Date | string = '2026-01-01T00:00:00Z') {
    this.#now = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.#now);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const sleeper: Sleeper = {
        wakeAt: this.#now + Math.max(0, ms),
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#sleepers.push(sleeper);
    });
  }

  timer(ms: number, fire: () => void): () => void {
    const sleeper: Sleeper = { wakeAt: this.#now + Math.max(0, ms), resolve: fire };
    this.#sleepers.push(sleeper);
    return () => {
      this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
    };
  }

  /** Number of callers currently waiting in sleep() or on a timer(). */
  get pendingSleepers(): number {
    return this.#sleepers.length;
  }

  /**
   * Moves time forward by `ms`, waking due sleepers one at a time and letting the event loop run after
   * each, so a loop that sleeps again inside the window is woken again too.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      const next = this.#sleepers.filter((s) => s.wakeAt <= target).sort((a, b) => a.wakeAt - b.wakeAt)[0];
      if (!next) break;
      this.#sleepers = this.#sleepers.filter((s) => s !== next);
      this.#now = Math.max(this.#now, next.wakeAt);
      next.resolve();
      await settle();
    }
    this.#now = target;
    await settle();
  }

  /** Jumps to an absolute time without waking anyone (for "the process was down" scenarios). */
  set(time: Date | string): void {
    this.#now = new Date(time).getTime();
  }
}

/** Lets pending promise callbacks and immediates run. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
