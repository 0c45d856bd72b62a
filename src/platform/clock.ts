// Time as a dependency: everything that reads the time or waits (monitor, hub timeouts, scheduler)
// takes a Clock, so tests can move time forward instead of sleeping.
import { setTimeout as delay } from 'node:timers/promises';

export interface Clock {
  now(): Date;
  /** Resolves after `ms`; rejects with the signal's reason when aborted first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => new Date(),
  sleep: async (ms, signal) => {
    await delay(ms, undefined, { signal });
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

  /** Number of callers currently waiting in sleep(). */
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
